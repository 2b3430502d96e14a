package retrypolicy

import "time"

// Occurrence is one fire time of a repeating interval, as returned by
// [RepeatingInterval.NextOccurrence].
type Occurrence struct {
	// At is the fire time.
	At time.Time
	// Index is k of the candidate: start + k·P, anchor + k·P or end − k·P
	// (see [RepeatingInterval.Next]); 1 for the single occurrence of an
	// interval without R.
	Index int64
	// Left is how many candidates come after this one: n − k for the start-
	// and anchor-based forms, k for the end-anchored form, 0 without R. It
	// is -1 for an unbounded interval (R without a count).
	Left int64
}

// NextOccurrence is [RepeatingInterval.Next] that also says which candidate
// the fire time is and how many candidates are left after it.
func (ri RepeatingInterval) NextOccurrence(anchor, now time.Time) (Occurrence, bool) {
	t, k, ok := ri.next(anchor, now)
	if !ok {
		return Occurrence{}, false
	}
	o := Occurrence{At: t, Index: k}
	switch {
	case !ri.repeat:
		o.Left = 0
	case ri.unbounded:
		o.Left = -1
	case ri.hasEnd && !ri.hasStart:
		o.Left = k
	default:
		o.Left = ri.count - k
	}
	return o, true
}

// ParseDateTime parses an ISO-8601 date-time in the form the repeating
// intervals use: YYYY-MM-DDThh:mm:ss with an optional fraction of 1 to 9
// digits and an optional offset "Z" or "±hh:mm"; without an offset it is UTC.
// Errors are *[ParseError] values of kind "date-time".
func ParseDateTime(s string) (time.Time, error) {
	dt, reason := parseDateTime(s)
	if reason != "" {
		return time.Time{}, newError("date-time", s, "%s", reason)
	}
	return dt.time(), nil
}
