package timer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// Type is the kind of a timer definition, as in BPMN's timerEventDefinition.
type Type string

// The timer types.
const (
	// TypeDate fires once at an ISO-8601 date-time (BPMN timeDate).
	TypeDate Type = "date"
	// TypeDuration fires once, a duration after the timer is created (BPMN
	// timeDuration).
	TypeDuration Type = "duration"
	// TypeCycle fires repeatedly, from an ISO-8601 repeating interval or a
	// cron expression (BPMN timeCycle).
	TypeCycle Type = "cycle"
)

// MaxYear is the last year a timer can fire in. An occurrence beyond it ends
// the cycle instead of being created (Camunda stores dates with four-digit
// years).
const MaxYear = 9999

// ErrInvalid is matched (with errors.Is) by every error Parse returns.
var ErrInvalid = errors.New("timer: invalid timer definition")

// DefinitionError reports a timer definition that cannot be used. Its
// message names the type, the value and what is wrong.
type DefinitionError struct {
	Type   Type
	Value  string
	Reason string
}

func (e *DefinitionError) Error() string {
	return fmt.Sprintf("timer: invalid time %s %q: %s", e.Type, e.Value, e.Reason)
}

// Is reports whether target is ErrInvalid.
func (e *DefinitionError) Is(target error) bool { return target == ErrInvalid }

// Definition is a parsed timer definition. Values come from Parse; the zero
// value is not valid.
type Definition struct {
	typ      Type
	value    string
	date     time.Time
	duration retrypolicy.Duration
	interval *retrypolicy.RepeatingInterval
	// until is the end of an Rn/<start>/<period>/<end> cycle.
	until *time.Time
	cron  *Cron
}

// Parse parses a timer definition of the given type:
//
//   - TypeDate: an ISO-8601 date-time, YYYY-MM-DDThh:mm:ss with an optional
//     fraction and an optional offset (Z, +02:00); without an offset, UTC;
//   - TypeDuration: an ISO-8601 duration such as PT5M;
//   - TypeCycle: a repeating interval written with R (R3/PT10H anchored at
//     the timer's creation, R/PT1H unbounded, R3/<start>/PT1H,
//     Rn/PT1H/<end>, see retrypolicy.RepeatingInterval), or
//     R[n]/<start>/<period>/<end>: start + k·P up to and including end; or,
//     when it does not begin with R, a cron expression in Spring's dialect
//     (see Cron).
//
// A cycle with zero repetitions (R0/...), a definition whose first
// occurrence lies beyond year MaxYear, and anything that does not parse are
// rejected with a *DefinitionError naming the value.
func Parse(typ Type, value string) (Definition, error) {
	d := Definition{typ: typ, value: value}
	fail := func(format string, args ...any) (Definition, error) {
		return Definition{}, &DefinitionError{Type: typ, Value: value, Reason: fmt.Sprintf(format, args...)}
	}
	switch typ {
	case TypeDate:
		t, err := retrypolicy.ParseDateTime(value)
		if err != nil {
			return fail("%s", reasonOf(err))
		}
		d.date = t
	case TypeDuration:
		dur, err := retrypolicy.ParseDuration(value)
		if err != nil {
			return fail("%s", reasonOf(err))
		}
		d.duration = dur
	case TypeCycle:
		if strings.HasPrefix(value, "R") {
			head := value
			if parts := strings.Split(value, "/"); len(parts) == 4 {
				until, err := retrypolicy.ParseDateTime(parts[3])
				if err != nil {
					return fail("part 4 (end): %s", reasonOf(err))
				}
				if _, err := retrypolicy.ParseDuration(parts[2]); err != nil {
					return fail("part 3 (period) of a four-part cycle R/<start>/<period>/<end>: %s", reasonOf(err))
				}
				head = strings.Join(parts[:3], "/")
				d.until = &until
			}
			ri, err := retrypolicy.ParseRepeatingInterval(head)
			if err != nil {
				return fail("%s", reasonOf(err))
			}
			if n, unbounded := ri.Repetitions(); !unbounded && n == 0 {
				return fail("zero repetitions (R0): the timer would never fire; use R1 or more, or R for unbounded")
			}
			if _, hasStart := ri.Start(); d.until != nil && !hasStart {
				return fail("a four-part cycle must be R[n]/<start>/<period>/<end>")
			}
			if start, _ := ri.Start(); d.until != nil && d.until.Before(start) {
				return fail("end %s is before start %s", d.until.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
			}
			d.interval = &ri
		} else {
			c, err := ParseCron(value)
			if err != nil {
				return fail("%s", reasonOf(err))
			}
			d.cron = c
		}
	default:
		return Definition{}, &DefinitionError{Type: typ, Value: value, Reason: "unknown timer type; use date, duration or cycle"}
	}
	return d, nil
}

func reasonOf(err error) string {
	var pe *retrypolicy.ParseError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	var ce *CronError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

// Type returns the definition's type.
func (d Definition) Type() Type { return d.typ }

// String returns the definition as given to Parse.
func (d Definition) String() string { return d.value }

// IsCron reports whether d is a cycle given as a cron expression.
func (d Definition) IsCron() bool { return d.cron != nil }

// Occurrence is one due date of a timer.
type Occurrence struct {
	// At is the due date, in UTC.
	At time.Time
	// Left is how many occurrences come after this one; -1 when unbounded
	// (R/... cycles and cron expressions).
	Left int64
}

// First returns the first occurrence of a timer created at created, or
// ok = false if it never fires (a cycle whose candidates all lie at or
// before created, or beyond MaxYear). A date in the past is due at once:
// its occurrence is the date itself.
func (d Definition) First(created time.Time) (Occurrence, bool) {
	switch d.typ {
	case TypeDate:
		return bounded(Occurrence{At: d.date, Left: 0})
	case TypeDuration:
		return bounded(Occurrence{At: d.duration.AddTo(created.UTC()), Left: 0})
	}
	return d.Next(created, created, 0)
}

// Next returns the occurrence that follows one firing at base (the later of
// the firing time and its due date) for a timer anchored at anchor (its
// creation time) whose occurrences have been moved by offset (see the
// package documentation), or ok = false when the timer has no further
// occurrence: a date or duration timer, a cycle after its last repetition
// or end date, or an occurrence beyond MaxYear. Missed candidates are
// skipped. Cron expressions ignore offset.
func (d Definition) Next(anchor, base time.Time, offset time.Duration) (Occurrence, bool) {
	switch {
	case d.interval != nil:
		o, ok := d.interval.NextOccurrence(anchor.UTC(), base.UTC().Add(-offset))
		if !ok {
			return Occurrence{}, false
		}
		if d.until != nil {
			if o.At.After(*d.until) {
				return Occurrence{}, false
			}
			o.Left = -1 // bounded by the end date, not by a count
		}
		return bounded(Occurrence{At: o.At.UTC().Add(offset), Left: o.Left})
	case d.cron != nil:
		t, ok := d.cron.Next(base)
		if !ok {
			return Occurrence{}, false
		}
		return bounded(Occurrence{At: t, Left: -1})
	default:
		return Occurrence{}, false
	}
}

func bounded(o Occurrence) (Occurrence, bool) {
	o.At = o.At.UTC()
	if o.At.Year() > MaxYear {
		return Occurrence{}, false
	}
	return o, true
}
