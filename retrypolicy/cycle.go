package retrypolicy

import (
	"strconv"
	"strings"
	"time"
)

// DefaultExecutions is the number of executions of a job without a retry
// cycle: the first attempt and two immediate retries.
const DefaultExecutions = 3

// Cycle is a parsed retry time cycle: the number of times a failing job is
// executed and how long to wait after each failure. It is one of
//
//   - Rn/<duration>: n executions (R0: 1), waiting <duration> each time;
//   - R/<duration>: unbounded executions, waiting <duration> each time;
//   - <duration>: 2 executions (a one-entry list);
//   - <d1>,<d2>,...,<dN>: N+1 executions, the k-th failure waits dk.
//
// Values are produced by [ParseCycle]. The zero Cycle stands for "no
// cycle": 3 executions ([DefaultExecutions]), retried immediately; its
// String is "".
type Cycle struct {
	repeat    bool  // Rn/<duration> or R/<duration>
	unbounded bool  // R/<duration>
	count     int64 // n of Rn
	// intervals holds the single duration of the R forms, or the list.
	intervals []Duration
}

const cycleForms = "expected Rn/<duration>, R/<duration>, a duration or a comma-separated list of durations"

// ParseCycle parses a retry time cycle: "R5/PT5M", "R/PT1M", "PT5M" or
// "PT10M,PT17M,PT20M". White space around the input and around list entries
// is ignored. Repeating intervals with a start or end date, and forms
// without R that contain '/', are rejected: a retry waits from the moment
// of failure, so a date has no meaning there.
func ParseCycle(s string) (Cycle, error) {
	c, reason := parseCycle(s)
	if reason != "" {
		return Cycle{}, newError("retry cycle", s, "%s", reason)
	}
	return c, nil
}

func parseCycle(s string) (Cycle, string) {
	var c Cycle
	t := strings.TrimSpace(s)
	if t == "" {
		return c, "empty; " + cycleForms
	}
	if strings.Contains(t, ",") {
		entries := strings.Split(t, ",")
		c.intervals = make([]Duration, 0, len(entries))
		for i, e := range entries {
			e = strings.TrimSpace(e)
			n := strconv.Itoa(i + 1)
			if e == "" {
				return Cycle{}, "entry " + n + " is empty"
			}
			if strings.Contains(e, "/") || e[0] == 'R' || e[0] == 'r' {
				return Cycle{}, "entry " + n + " " + strconv.Quote(e) + ": list entries must be durations"
			}
			d, reason := parseDuration(e)
			if reason != "" {
				return Cycle{}, "entry " + n + ": " + (&ParseError{Kind: "duration", Input: e, Reason: reason}).describe()
			}
			c.intervals = append(c.intervals, d)
		}
		return c, ""
	}
	if strings.Contains(t, "/") || t[0] == 'R' || t[0] == 'r' {
		if !strings.Contains(t, "/") && t[0] == 'R' {
			return Cycle{}, "missing '/'; " + cycleForms
		}
		ri, reason := parseRepeatingInterval(t)
		if reason != "" {
			return Cycle{}, reason
		}
		if !ri.repeat {
			return Cycle{}, "an interval without R is not a retry cycle; " + cycleForms
		}
		if ri.hasStart || ri.hasEnd {
			return Cycle{}, "a retry cycle cannot have a start or end date; " + cycleForms
		}
		c.repeat, c.unbounded, c.count = true, ri.unbounded, ri.count
		c.intervals = []Duration{ri.period}
		return c, ""
	}
	d, reason := parseDuration(t)
	if reason != "" {
		return Cycle{}, reason
	}
	c.intervals = []Duration{d}
	return c, ""
}

// String returns the canonical form: "R5/PT5M", "R/PT5M", "PT5M" or
// "PT10M,PT17M,PT20M" (no spaces). ParseCycle(c.String()) equals c for
// every parsed c. The zero Cycle gives "".
func (c Cycle) String() string {
	if len(c.intervals) == 0 {
		return ""
	}
	if c.repeat {
		if c.unbounded {
			return "R/" + c.intervals[0].String()
		}
		return "R" + strconv.FormatInt(c.count, 10) + "/" + c.intervals[0].String()
	}
	parts := make([]string, len(c.intervals))
	for i, d := range c.intervals {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

// IsZero reports whether c is the zero Cycle ("no cycle").
func (c Cycle) IsZero() bool { return len(c.intervals) == 0 }

// Repeating reports whether c is of the form Rn/<duration> or R/<duration>.
func (c Cycle) Repeating() bool { return c.repeat }

// Intervals returns a copy of the waits: the single duration of the R
// forms, or the entries of the list. It is empty for the zero Cycle.
func (c Cycle) Intervals() []Duration {
	return append([]Duration(nil), c.intervals...)
}

// Executions returns how many times a job with this cycle is executed
// (Camunda's initial "retries"): Rn/d gives n, except R0/d which gives 1;
// R/d gives unbounded = true (and n = 0); a single duration gives 2; a list
// of N durations gives N+1; the zero Cycle gives [DefaultExecutions].
func (c Cycle) Executions() (n int, unbounded bool) {
	switch {
	case len(c.intervals) == 0:
		return DefaultExecutions, false
	case c.repeat && c.unbounded:
		return 0, true
	case c.repeat && c.count == 0:
		return 1, false
	case c.repeat:
		return int(c.count), false
	default:
		return len(c.intervals) + 1, false
	}
}

// Interval returns the wait after a failure that happens when the job had
// executionsLeft executions left before the failure (Camunda's retries
// before it is decremented). For Rn/d and R/d it is always d. For a list of
// N entries the index is N − (executionsLeft − 1), clamped to [0, N−1]: with
// "PT10M,PT17M,PT20M" (4 executions) the failures with 4, 3, 2 and 1
// executions left wait 10, 17, 20 and 20 minutes, and when retries have been
// raised above 4 the first entry is used until the count is back in range.
// The zero Cycle waits nothing (PT0S).
func (c Cycle) Interval(executionsLeft int) Duration {
	n := len(c.intervals)
	switch {
	case n == 0:
		return Duration{}
	case c.repeat || executionsLeft <= 1:
		return c.intervals[n-1]
	case executionsLeft-1 >= n:
		return c.intervals[0]
	default:
		return c.intervals[n-(executionsLeft-1)]
	}
}

// NextRetryAt returns when a job that failed at failedAt with executionsLeft
// executions left before the failure should be tried again:
// failedAt + c.Interval(executionsLeft), with calendar fields added as
// described for [Duration.AddTo]. Whether the job is retried at all (that
// is, whether executions remain after this failure) is for the caller to
// decide.
func (c Cycle) NextRetryAt(failedAt time.Time, executionsLeft int) time.Time {
	return c.Interval(executionsLeft).AddTo(failedAt)
}
