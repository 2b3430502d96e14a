package retrypolicy

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// RepeatingInterval is an ISO-8601 (repeating) interval such as "R3/PT10H",
// "R/P1D", "R5/2026-01-31T10:00:00/P1M", "R2/P1D/2026-03-31T00:00:00Z",
// "2026-01-31T10:00:00/PT1H" or "2026-01-01T00:00:00Z/2026-01-02T00:00:00Z".
// See the package documentation for the forms and for [RepeatingInterval.Next].
//
// Values are produced by [ParseRepeatingInterval]; the zero value is not a
// valid interval.
type RepeatingInterval struct {
	repeat    bool  // written with a leading R part
	unbounded bool  // "R" without a count
	count     int64 // n of "Rn"
	start     dateTime
	end       dateTime
	hasStart  bool
	hasEnd    bool
	period    Duration // as written
	hasPeriod bool
}

// ParseRepeatingInterval parses a repeating interval or a single interval
// with at most three '/'-separated parts. The forms are listed in the
// package documentation. An end before the start is rejected.
func ParseRepeatingInterval(s string) (RepeatingInterval, error) {
	ri, reason := parseRepeatingInterval(s)
	if reason != "" {
		return RepeatingInterval{}, newError("repeating interval", s, "%s", reason)
	}
	return ri, nil
}

type partKind int

const (
	partDuration partKind = iota
	partDateTime
)

func parseRepeatingInterval(s string) (RepeatingInterval, string) {
	var ri RepeatingInterval
	if s == "" {
		return ri, "empty"
	}
	parts := strings.Split(s, "/")
	if len(parts) > 3 {
		return ri, "more than three '/'-separated parts"
	}
	if len(parts) == 1 {
		return ri, "missing '/'; expected Rn/<duration>, R/<duration>, Rn/<start>/<duration>, Rn/<duration>/<end>, <start>/<duration> or <start>/<end>"
	}
	for i, p := range parts {
		if p == "" {
			return ri, "part " + strconv.Itoa(i+1) + " is empty"
		}
	}
	rest := parts
	if c := parts[0][0]; c == 'R' || c == 'r' {
		if c == 'r' {
			return ri, "lower-case 'r' not allowed; use 'R'"
		}
		ri.repeat = true
		if parts[0] == "R" {
			ri.unbounded = true
		} else {
			digits := parts[0][1:]
			for i := 0; i < len(digits); i++ {
				if !isDigit(digits[i]) {
					return ri, "repetition count " + strconv.Quote(parts[0]) + " must be R followed by digits (R5) or R alone (unbounded)"
				}
			}
			n, ok := parseDigits(digits, maxField)
			if !ok {
				return ri, "repetition count " + digits + " too large (maximum 2147483647)"
			}
			ri.count = n
		}
		rest = parts[1:]
	} else if len(parts) == 3 {
		return ri, "three parts need a leading repetition count (Rn or R)"
	}

	kinds := make([]partKind, len(rest))
	var durs [2]Duration
	var dates [2]dateTime
	for i, p := range rest {
		partNo := strconv.Itoa(len(parts) - len(rest) + i + 1)
		switch c := p[0]; {
		case c == 'R' || c == 'r':
			return ri, "part " + partNo + ": the repetition count must be the first part"
		case c == 'P' || c == 'p' || c == '-' || c == '+' || c == ' ':
			d, reason := parseDuration(p)
			if reason != "" {
				return ri, "part " + partNo + ": " + (&ParseError{Kind: "duration", Input: p, Reason: reason}).describe()
			}
			kinds[i], durs[i] = partDuration, d
		case isDigit(c) && looksLikeDuration(p):
			return ri, "part " + partNo + " " + strconv.Quote(p) + " is not a duration: " + durationHint(p)
		case isDigit(c):
			dt, reason := parseDateTime(p)
			if reason != "" {
				return ri, "part " + partNo + ": " + (&ParseError{Kind: "date-time", Input: p, Reason: reason}).describe()
			}
			kinds[i], dates[i] = partDateTime, dt
		default:
			return ri, "part " + partNo + " " + strconv.Quote(p) + " is neither a duration (P...) nor a date-time (YYYY-MM-DDThh:mm:ss)"
		}
	}

	switch {
	case len(rest) == 1 && kinds[0] == partDuration:
		ri.period, ri.hasPeriod = durs[0], true
	case len(rest) == 1:
		return ri, "a repetition needs a duration, not only a date-time"
	case kinds[0] == partDateTime && kinds[1] == partDuration:
		ri.start, ri.hasStart = dates[0], true
		ri.period, ri.hasPeriod = durs[1], true
	case kinds[0] == partDuration && kinds[1] == partDateTime:
		ri.period, ri.hasPeriod = durs[0], true
		ri.end, ri.hasEnd = dates[1], true
	case kinds[0] == partDateTime && kinds[1] == partDateTime:
		ri.start, ri.hasStart = dates[0], true
		ri.end, ri.hasEnd = dates[1], true
		if ri.end.time().Before(ri.start.time()) {
			return ri, "end " + dates[1].String() + " is before start " + dates[0].String()
		}
	default:
		return ri, "two durations; expected a date-time as start or end"
	}
	return ri, ""
}

// String returns the canonical form; ParseRepeatingInterval(ri.String())
// equals ri.
func (ri RepeatingInterval) String() string {
	var parts []string
	if ri.repeat {
		if ri.unbounded {
			parts = append(parts, "R")
		} else {
			parts = append(parts, "R"+strconv.FormatInt(ri.count, 10))
		}
	}
	if ri.hasStart {
		parts = append(parts, ri.start.String())
	}
	if ri.hasPeriod {
		parts = append(parts, ri.period.String())
	}
	if ri.hasEnd {
		parts = append(parts, ri.end.String())
	}
	return strings.Join(parts, "/")
}

// Repeating reports whether the interval was written with a repetition
// count (Rn or R).
func (ri RepeatingInterval) Repeating() bool { return ri.repeat }

// Repetitions returns n of Rn, or unbounded = true for R. Without an R part
// it returns (0, false); such an interval has a single occurrence.
func (ri RepeatingInterval) Repetitions() (n int, unbounded bool) {
	return int(ri.count), ri.unbounded
}

// Start returns the start date-time, if one was written.
func (ri RepeatingInterval) Start() (time.Time, bool) {
	if !ri.hasStart {
		return time.Time{}, false
	}
	return ri.start.time(), true
}

// End returns the end date-time, if one was written.
func (ri RepeatingInterval) End() (time.Time, bool) {
	if !ri.hasEnd {
		return time.Time{}, false
	}
	return ri.end.time(), true
}

// Period returns the duration part as written. It reports false for the
// <start>/<end> forms, whose period is the elapsed time end − start.
func (ri RepeatingInterval) Period() (Duration, bool) {
	return ri.period, ri.hasPeriod
}

// step returns the period used for the candidates: the written duration,
// or end − start as elapsed seconds for the <start>/<end> forms.
func (ri RepeatingInterval) step() Duration {
	if ri.hasPeriod {
		return ri.period
	}
	s, e := ri.start.time(), ri.end.time()
	secs := e.Unix() - s.Unix()
	nanos := int64(e.Nanosecond() - s.Nanosecond())
	if nanos < 0 {
		secs--
		nanos += 1e9
	}
	var d Duration
	d.fields[fSeconds] = secs
	d.nanos = nanos
	d.present = 1 << fSeconds
	return d
}

// Next returns the next fire time strictly after now, or ok = false when the
// interval is finished. The candidates are:
//
//   - Rn/<start>/P and Rn/<start>/<end>: start + k·P for k = 0..n; the
//     first one after now;
//   - Rn/P/<end>: end − k·P for k = 0..n; the earliest one after now;
//   - Rn/P: anchor + k·P for k = 1..n, where anchor is the moment the timer
//     was created (so R3/PT10H fires at +10h, +20h, +30h); the first one
//     after now;
//   - R instead of Rn: the same with k unbounded; R0: k = 0 only (none at
//     all for Rn/P);
//   - no R part: a single candidate, the end of the interval (start + P,
//     or the written end).
//
// anchor is used only by the Rn/P and R/P forms. k·P is P with every field
// multiplied by k, added once (see the package documentation). Missed
// candidates are skipped, not caught up. Candidates more than about four
// billion years away count as beyond any time and end the interval.
func (ri RepeatingInterval) Next(anchor, now time.Time) (next time.Time, ok bool) {
	next, _, ok = ri.next(anchor, now)
	return next, ok
}

// next is Next that also returns the index k of the candidate.
func (ri RepeatingInterval) next(anchor, now time.Time) (next time.Time, k int64, ok bool) {
	p := ri.step()
	if !ri.repeat {
		var c time.Time
		if ri.hasEnd {
			c = ri.end.time()
		} else {
			c, _ = p.shift(ri.start.time(), 1, 1)
		}
		if !c.After(now) {
			return time.Time{}, 0, false
		}
		return c, 1, true
	}
	hi := ri.count
	if ri.unbounded {
		hi = math.MaxInt64
	}
	if ri.hasEnd && !ri.hasStart {
		// g(k) = end − k·P does not increase with k; find the largest k in
		// [0, hi] with g(k) > now. Out of range counts as before now.
		end := ri.end.time()
		if !end.After(now) {
			return time.Time{}, 0, false
		}
		lo := int64(0)
		for lo < hi {
			mid := lo + (hi-lo)/2 + (hi-lo)%2
			if t, ok := p.shift(end, mid, -1); ok && t.After(now) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		t, _ := p.shift(end, lo, -1)
		return t, lo, true
	}
	base, lo := anchor, int64(1)
	if ri.hasStart {
		base, lo = ri.start.time(), 0
	}
	if lo > hi {
		return time.Time{}, 0, false
	}
	// f(k) = base + k·P does not decrease with k; find the smallest k in
	// [lo, hi] with f(k) > now. Out of range counts as after now.
	if t, ok := p.shift(base, hi, 1); ok && !t.After(now) {
		return time.Time{}, 0, false
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if t, ok := p.shift(base, mid, 1); !ok || t.After(now) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	t, ok := p.shift(base, lo, 1)
	if !ok {
		return time.Time{}, 0, false
	}
	return t, lo, true
}

// looksLikeDuration reports whether s, which starts with a digit, is a
// duration written without its leading 'P' (such as "1S" or "5M"), rather than
// a date-time.
func looksLikeDuration(s string) bool {
	letters := 0
	for _, c := range strings.ToUpper(s) {
		switch {
		case isDigit(byte(c)) || c == '.' || c == ',':
		case strings.ContainsRune("YMWDTHS", c):
			letters++
		default:
			return false
		}
	}
	return letters > 0
}

// durationHint says how to write s, a duration without its 'P', properly.
func durationHint(s string) string {
	const rule = "a duration starts with 'P', and hours, minutes and seconds follow a 'T'"
	upper := strings.ToUpper(s)
	switch {
	case strings.ContainsAny(upper, "T"):
		return rule + `, as in "P` + upper + `"`
	case strings.Trim(upper, "0123456789.,HMS") == "":
		return rule + `, as in "PT` + upper + `"`
	case strings.Trim(upper, "0123456789.,YWD") == "":
		return rule + `, as in "P` + upper + `"`
	default:
		return rule + ` (such as "PT1S", "PT5M", "P1D")`
	}
}
