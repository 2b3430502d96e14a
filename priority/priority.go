// Package priority holds job priorities the way Camunda 7 has them: int64,
// higher is more important, default 0, fixed when a job is created from (in
// order) its job definition's overriding priority, its activity's priority,
// its process definition's priority, or 0.
//
// A Source is where an activity's or a process's priority comes from: a
// constant, or a typed function of the job's args, in the spirit of Camunda's
// ${customer.status == 'VIP' ? 10 : 0}.
package priority

import (
	"fmt"

	"github.com/riverqueue/river"
)

// Default is the priority of a job no rule gives one to.
const Default int64 = 0

// Source computes a priority for a job about to be inserted.
type Source interface {
	// Priority returns the priority of a job with these args.
	Priority(args river.JobArgs) (int64, error)

	// String describes the source for errors and logs.
	String() string
}

// Constant returns a Source that always gives p.
func Constant(p int64) Source { return constant(p) }

type constant int64

func (c constant) Priority(river.JobArgs) (int64, error) { return int64(c), nil }
func (c constant) String() string                        { return fmt.Sprintf("constant %d", int64(c)) }

// FromArgs returns a Source that computes the priority from the job's typed
// args, for example to put VIP customers first:
//
//	priority.FromArgs(func(args ShipOrderArgs) int64 {
//		if args.CustomerStatus == "VIP" {
//			return 10
//		}
//		return 0
//	})
//
// A job whose args are not a T (or *T) gets an error naming both types.
func FromArgs[T river.JobArgs](fn func(args T) int64) Source {
	return fromArgs[T]{fn: fn}
}

type fromArgs[T river.JobArgs] struct {
	fn func(args T) int64
}

func (f fromArgs[T]) Priority(args river.JobArgs) (int64, error) {
	if typed, ok := args.(T); ok {
		return f.fn(typed), nil
	}
	if typed, ok := any(args).(*T); ok && typed != nil {
		return f.fn(*typed), nil
	}
	return 0, fmt.Errorf("priority: %s cannot compute the priority of args of type %T", f, args)
}

func (f fromArgs[T]) String() string {
	var zero T
	return fmt.Sprintf("priority function of %T", zero)
}
