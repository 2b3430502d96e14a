// Package retrypolicy holds riverbpmn's retry mechanism: Camunda 7 style
// retry time cycles applied to River jobs. It parses and evaluates the
// ISO-8601 forms used by retry time cycles and timer cycles (durations,
// repeating intervals and comma-separated interval lists), which is pure
// arithmetic, and maps a job's cycle onto River's attempt and max_attempts
// (see River jobs below). The engine (package workflow) wires it in: its
// insert middleware, its work middleware and its river.ClientRetryPolicy
// (workflow.RetryPolicy) call this package, giving it the job context's
// cycle.
//
// # Durations
//
// [ParseDuration] accepts PnYnMnDTnHnMnS (any subset, in that order, fields
// may exceed their normal range such as PT90M) and PnW (weeks alone).
// Only the seconds field may carry a fraction, with 1 to 9 digits after a
// '.' (nanosecond precision). Designators are upper case; signs, spaces,
// decimal commas, an empty "P", a "T" with no time field after it and
// numbers above 2147483647 are rejected. A [Duration] remembers the fields
// as written (PT90M stays PT90M) so that String round-trips.
//
// Adding a duration to a time ([Duration.AddTo]) is done in this order, in
// the location of the time:
//
//  1. years, as calendar years, clamping the day to the end of the month
//     (Feb 29 + P1Y = Feb 28);
//  2. months, as calendar months, clamping the day to the end of the month
//     (Jan 31 + P1M = Feb 28, or Feb 29 in a leap year), like Java's
//     plusMonths and unlike Go's time.AddDate, which would give Mar 3;
//  3. days, as calendar days (same wall-clock time);
//  4. weeks, hours, minutes and seconds, as elapsed time (a week is exactly
//     7×24 h).
//
// Years and months are clamped separately, as Camunda does with
// javax.xml.datatype.Duration: 2024-02-29 + P1Y1M = 2025-03-28.
// Subtraction ([Duration.SubtractFrom]) applies the negated fields in the
// same order: Mar 31 − P1M = Feb 28.
//
// # Repeating intervals
//
// [ParseRepeatingInterval] accepts, with at most three '/'-separated parts:
//
//	Rn/<duration>            n repetitions anchored at a caller-given time
//	R/<duration>             unbounded, anchored at a caller-given time
//	Rn/<start>/<duration>    start + k·P, k = 0..n
//	Rn/<duration>/<end>      end − k·P, k = 0..n
//	Rn/<start>/<end>         period = end − start (elapsed), start + k·P
//	<start>/<duration>       no R: a single occurrence, at start + P
//	<duration>/<end>         no R: a single occurrence, at end
//	<start>/<end>            no R: a single occurrence, at end
//
// Dates are YYYY-MM-DDThh:mm:ss with an optional fraction of 1 to 9 digits
// and an optional offset "Z" or "±hh:mm"; without an offset they are UTC.
// k·P means the duration with every field multiplied by k, added once to
// the start (so a monthly cycle from Jan 31 fires on Feb 28, Mar 31, Apr 30,
// and does not drift to the 28th). [RepeatingInterval.Next] returns the
// first candidate strictly after now (for an end-anchored interval: the
// earliest candidate strictly after now); when none is left the interval is
// finished and Next reports false. Missed candidates are skipped, never
// caught up.
//
// # Retry cycles
//
// [ParseCycle] accepts the forms usable as a job's retry time cycle:
// Rn/<duration>, R/<duration>, a single duration such as PT5M, or a list
// such as "PT10M,PT17M,PT20M" (white space around entries is ignored).
// [Cycle.Executions] gives the number of executions the cycle allows and
// [Cycle.NextRetryAt] the calendar-correct time of the next attempt after a
// failure, following Camunda's interval index rule.
//
// All parse errors are *[ParseError] values that match [ErrInvalid] with
// errors.Is.
//
// # River jobs
//
// Camunda keeps a job's retries (executions left) in a column it decrements
// on failure; River keeps the executions done (attempt) and allowed
// (max_attempts). At insert, a job's cycle is chosen by [ResolveCycle] (job
// definition, job context, engine default, none) or, for a plain River job,
// [ApplyDefaultCycle], and sets River's MaxAttempts ([MaxAttempts];
// [MaxAttemptsUnbounded] for R/<duration>). After a failure, [NextRetry]
// answers River's retry policy with the cycle's interval for the
// [ExecutionsLeft]. A conflict failure ([ErrConflict], [IsConflict]) uses up
// no execution: [SnoozeConflicts] turns it into a River snooze for the
// interval, and [RecordConflict] keeps it in the job's errors.
package retrypolicy
