package retrypolicy

import (
	"errors"
	"fmt"
)

// ErrInvalid is matched (with errors.Is) by every error returned by the
// parse functions of this package.
var ErrInvalid = errors.New("retrypolicy: invalid ISO-8601 value")

// ParseError reports an input that does not parse. Its message names the
// kind of value, the input and what is wrong, for example:
//
//	retrypolicy: invalid duration "PT5.5M": fraction allowed only on seconds
type ParseError struct {
	// Kind is what was being parsed: "duration", "date-time",
	// "repeating interval" or "retry cycle".
	Kind string
	// Input is the complete text that was given to the parse function.
	Input string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("retrypolicy: invalid %s %q: %s", e.Kind, e.Input, e.Reason)
}

// Is reports whether target is [ErrInvalid].
func (e *ParseError) Is(target error) bool { return target == ErrInvalid }

// describe renders a nested error for inclusion in an outer reason, e.g.
// `duration "PT5.5M": fraction allowed only on seconds`.
func (e *ParseError) describe() string {
	return fmt.Sprintf("%s %q: %s", e.Kind, e.Input, e.Reason)
}

func newError(kind, input, format string, args ...any) *ParseError {
	return &ParseError{Kind: kind, Input: input, Reason: fmt.Sprintf(format, args...)}
}
