package timer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // CRON_TZ zones work on machines without a zoneinfo database

	"github.com/reugn/go-quartz/quartz"
)

// Cron is a cron expression in the dialect Camunda 7.24 reads: Spring's
// CronExpression. Values come from ParseCron.
//
// An expression has exactly six fields separated by spaces, seconds first:
//
//	second minute hour day-of-month month day-of-week
//
// with lists (,), ranges (-), steps (/), * and ? (any), month names
// JAN-DEC and day names SUN-SAT (any case), and:
//
//   - day of month: L (last day), L-n (n days before the last), nW (the
//     weekday nearest day n, within the month), LW (last weekday);
//   - day of week: 0 or 7 is Sunday, 1 Monday ... 6 Saturday; nL (the last
//     day n of the month), n#k (the k-th day n of the month, k = 1..5);
//   - the macros @yearly, @annually, @monthly, @weekly, @daily, @midnight
//     and @hourly.
//
// When both day fields restrict (neither is * or ?), a time must match both,
// as in Spring (Friday the 13th is "0 0 0 13 * FRI"), unlike Unix cron,
// which takes either.
//
// Times are evaluated in UTC, or in the time zone a prefix names:
// "CRON_TZ=Europe/Paris 0 0 9 * * MON-FRI" is 9:00 on weekdays, Paris time,
// all year (the convention of robfig/cron and Kubernetes; TZ= is accepted
// too; the zone is an IANA name). Being part of the expression, the zone is
// stored with the timer and survives restarts of any client. Across a
// daylight saving change, times are wall-clock times, as in Spring's
// CronExpression with a zoned time: a time the clock skips (2:30 when it
// jumps from 2:00 to 3:00) does not happen that day, and a time the clock
// passes twice happens once, the first time.
//
// Cron evaluates with github.com/reugn/go-quartz: the expression is
// translated to Quartz's dialect first (day of week +1, since Quartz counts
// 1 = Sunday; ranges and steps of the day of week are expanded to lists).
type Cron struct {
	expr string
	// loc is the time zone the fields are read in (CRON_TZ=; UTC without).
	loc *time.Location
	// seconds, minutes and hours are the fields' values, to recognise the
	// times go-quartz makes up in a daylight saving gap (it moves a time the
	// clock skips forward, where Spring skips it).
	seconds, minutes, hours map[int]bool
	// dom has the day-of-week field relaxed to ?, dow the day of month
	// relaxed; only one of them is set when one day field is * or ?.
	dom, dow *quartz.CronTrigger
	// days and months, when the day-of-month field is plain numbers, are
	// the allowed days and months: go-quartz rolls an impossible date (30
	// February) over into the next month, so its answers are checked.
	days, months map[int]bool
}

// CronError reports a cron expression that cannot be used.
type CronError struct {
	Expr   string
	Reason string
}

func (e *CronError) Error() string {
	return fmt.Sprintf("timer: invalid cron expression %q: %s", e.Expr, e.Reason)
}

// Is reports whether target is ErrInvalid.
func (e *CronError) Is(target error) bool { return target == ErrInvalid }

var cronMacros = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 0",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

// maxCronIntersections bounds the search for a time matching both day
// fields; Friday the 13th takes at most 14 steps, an impossible combination
// (30 February on a Monday) ends the search with no next time.
const maxCronIntersections = 2000

// ParseCron parses a cron expression in Spring's dialect (see Cron). Errors
// are *CronError values naming the expression.
func ParseCron(expr string) (*Cron, error) {
	fail := func(format string, args ...any) (*Cron, error) {
		return nil, &CronError{Expr: expr, Reason: fmt.Sprintf(format, args...)}
	}
	src := strings.TrimSpace(expr)
	loc := time.UTC
	if prefix, rest, ok := strings.Cut(src, " "); ok && (strings.HasPrefix(prefix, "CRON_TZ=") || strings.HasPrefix(prefix, "TZ=")) {
		_, name, _ := strings.Cut(prefix, "=")
		l, err := time.LoadLocation(name)
		if err != nil || name == "" || strings.EqualFold(name, "Local") {
			return fail("time zone %q is not an IANA time zone name (like Europe/Paris or UTC)", name)
		}
		loc, src = l, strings.TrimSpace(rest)
	} else if strings.HasPrefix(src, "CRON_TZ=") || strings.HasPrefix(src, "TZ=") {
		return fail("a time zone prefix needs the expression after it: CRON_TZ=Europe/Paris 0 0 9 * * *")
	}
	if macro, ok := cronMacros[strings.ToLower(src)]; ok {
		src = macro
	} else if strings.HasPrefix(src, "@") {
		return fail("unknown macro; use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly")
	}
	fields := strings.Fields(strings.ToUpper(src))
	if len(fields) != 6 {
		return fail("%d fields; Camunda reads Spring's 6 fields: second minute hour day-of-month month day-of-week", len(fields))
	}
	var timeOfDay [3]map[int]bool
	for i, f := range []struct {
		name   string
		lo, hi int
		names  map[string]int
	}{{"second", 0, 59, nil}, {"minute", 0, 59, nil}, {"hour", 0, 23, nil}, {"", 0, 0, nil}, {"month", 1, 12, monthNames}} {
		if f.name == "" {
			continue
		}
		values, err := expandField(fields[i], f.lo, f.hi, f.names)
		if err != nil {
			return fail("%s %q: %v", f.name, fields[i], err)
		}
		if i < 3 {
			timeOfDay[i] = values
		}
	}
	dow, err := springDayOfWeekToQuartz(fields[5])
	if err != nil {
		return fail("day of week %q: %v", fields[5], err)
	}
	dom := fields[3]
	anyDOM := dom == "*" || dom == "?"
	anyDOW := dow == "*" || dow == "?"
	c := &Cron{expr: expr, loc: loc, seconds: timeOfDay[0], minutes: timeOfDay[1], hours: timeOfDay[2]}
	if !strings.ContainsAny(dom, "LW?*") {
		c.days, err = expandField(dom, 1, 31, nil)
		if err == nil {
			c.months, err = expandField(fields[4], 1, 12, monthNames)
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	build := func(dayOfMonth, dayOfWeek string) (*quartz.CronTrigger, error) {
		q := strings.Join([]string{fields[0], fields[1], fields[2], dayOfMonth, fields[4], dayOfWeek}, " ")
		return quartz.NewCronTriggerWithLoc(q, loc)
	}
	switch {
	case anyDOW:
		c.dom, err = build(dom, "?")
	case anyDOM:
		c.dow, err = build("?", dow)
	default:
		if c.dom, err = build(dom, "?"); err == nil {
			c.dow, err = build("?", dow)
		}
	}
	if err != nil {
		return fail("%v", err)
	}
	return c, nil
}

// String returns the expression as given to ParseCron.
func (c *Cron) String() string { return c.expr }

// Next returns the first time strictly after t that matches, at a whole
// second, or ok = false if there is none (before the year 3940, the limit
// of the evaluator). The time is in UTC.
func (c *Cron) Next(t time.Time) (time.Time, bool) {
	from := t
	for i := 0; i < maxCronIntersections; i++ {
		next, ok := c.nextCandidate(from)
		if !ok {
			return time.Time{}, false
		}
		first, repeated := c.firstPass(next)
		switch {
		case !c.onTheClock(next):
			// go-quartz moved a time the clock skips out of the gap.
		case !repeated:
			return next, true
		case first.After(t):
			// go-quartz gave the second pass of a time the clock went
			// through twice (Go's time.Date may pick either): the first.
			return first, true
		}
		// Skipped, or the second pass of a time whose first pass was at or
		// before t: look on after it.
		from = next
	}
	return time.Time{}, false
}

// onTheClock reports whether t's wall clock in c's zone is one of the
// times of day the expression names. go-quartz moves a time the clock skips
// forward out of the gap (to 3:30 for 2:30 when the clock jumps from 2:00
// to 3:00), where Spring skips it. Always true in UTC.
func (c *Cron) onTheClock(t time.Time) bool {
	if c.loc == time.UTC {
		return true
	}
	local := t.In(c.loc)
	return c.seconds[local.Second()] && c.minutes[local.Minute()] && c.hours[local.Hour()]
}

// firstPass reports whether t is the second pass of its wall-clock time in
// c's zone (the clock was set back over it), and if so the first pass.
// Clocks go back by 30 minutes, 1 hour or (rarely, historically) 2 hours.
func (c *Cron) firstPass(t time.Time) (first time.Time, repeated bool) {
	if c.loc == time.UTC {
		return t, false
	}
	local := t.In(c.loc)
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		earlier := t.Add(-back)
		e := earlier.In(c.loc)
		if e.YearDay() == local.YearDay() && e.Year() == local.Year() &&
			e.Hour() == local.Hour() && e.Minute() == local.Minute() && e.Second() == local.Second() {
			return earlier, true
		}
	}
	return t, false
}

// nextCandidate is go-quartz's next time for the expression's day fields
// (both must match when both restrict), not yet checked against daylight
// saving changes.
func (c *Cron) nextCandidate(t time.Time) (time.Time, bool) {
	next := func(tr *quartz.CronTrigger, after time.Time) (time.Time, bool) {
		n, err := tr.NextFireTime(after.UnixNano())
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(0, n).UTC(), true
	}
	if c.dow == nil {
		return c.nextDOM(t)
	}
	if c.dom == nil {
		return next(c.dow, t)
	}
	a, okA := c.nextDOM(t)
	b, okB := next(c.dow, t)
	for i := 0; i < maxCronIntersections; i++ {
		if !okA || !okB {
			return time.Time{}, false
		}
		switch {
		case a.Equal(b):
			return a, true
		case a.Before(b):
			a, okA = c.nextDOM(b.Add(-time.Second))
		default:
			b, okB = next(c.dow, a.Add(-time.Second))
		}
	}
	return time.Time{}, false
}

// nextDOM is the next time of the day-of-month trigger, skipping the
// rolled-over dates go-quartz gives for days a month does not have.
func (c *Cron) nextDOM(t time.Time) (time.Time, bool) {
	for i := 0; i < maxCronIntersections; i++ {
		n, err := c.dom.NextFireTime(t.UnixNano())
		if err != nil {
			return time.Time{}, false
		}
		next := time.Unix(0, n).UTC()
		local := next.In(c.loc)
		if c.days == nil || c.days[local.Day()] && c.months[int(local.Month())] {
			return next, true
		}
		t = next
	}
	return time.Time{}, false
}

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
	"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}

// expandField expands a plain field (lists of values, ranges and steps, or *)
// to the set of its values in [lo, hi].
func expandField(field string, lo, hi int, names map[string]int) (map[int]bool, error) {
	value := func(s string) (int, error) {
		if v, ok := names[s]; ok {
			return v, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("%q is not a value from %d to %d", s, lo, hi)
		}
		return v, nil
	}
	set := map[int]bool{}
	for _, item := range strings.Split(field, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			s, err := strconv.Atoi(stepText)
			if err != nil || s < 1 {
				return nil, fmt.Errorf("step %q must be a positive number", stepText)
			}
			step = s
		}
		from, to := lo, hi
		switch {
		case rng == "*" || rng == "?":
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if from, err = value(a); err != nil {
				return nil, err
			}
			if to, err = value(b); err != nil {
				return nil, err
			}
		default:
			v, err := value(rng)
			if err != nil {
				return nil, err
			}
			from = v
			if !hasStep {
				to = v
			}
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}

var dayNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

// springDay reads a Spring day of week, 0-7 or SUN-SAT, as 0 (Sunday) to 6.
func springDay(s string) (int, error) {
	if d, ok := dayNames[s]; ok {
		return d, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 7 {
		return 0, fmt.Errorf("%q is not a day of week (0-7 or SUN-SAT)", s)
	}
	return n % 7, nil
}

// springDayOfWeekToQuartz translates Spring's day-of-week field (0 or 7 =
// Sunday) to Quartz's (1 = Sunday). Ranges and steps are expanded into a
// list of days, since a Spring range ending on 7 has no Quartz range.
func springDayOfWeekToQuartz(field string) (string, error) {
	if field == "*" || field == "?" {
		return field, nil
	}
	var out []string
	for _, item := range strings.Split(field, ",") {
		switch {
		case item == "":
			return "", fmt.Errorf("empty list entry")
		case strings.HasSuffix(item, "L"):
			d, err := springDay(strings.TrimSuffix(item, "L"))
			if err != nil {
				return "", fmt.Errorf("%s (nL needs a day before L)", err)
			}
			out = append(out, strconv.Itoa(d+1)+"L")
		case strings.Contains(item, "#"):
			day, nth, _ := strings.Cut(item, "#")
			d, err := springDay(day)
			if err != nil {
				return "", err
			}
			k, err := strconv.Atoi(nth)
			if err != nil || k < 1 || k > 5 {
				return "", fmt.Errorf("%q: the week in n#k must be 1 to 5", item)
			}
			out = append(out, strconv.Itoa(d+1)+"#"+strconv.Itoa(k))
		default:
			days, err := expandDays(item)
			if err != nil {
				return "", err
			}
			for _, d := range days {
				out = append(out, strconv.Itoa(d+1))
			}
		}
	}
	if len(out) > 1 {
		for _, o := range out {
			if strings.ContainsAny(o, "L#") {
				return "", fmt.Errorf("nL and n#k cannot be combined with other entries")
			}
		}
	}
	return strings.Join(out, ","), nil
}

// expandDays expands one list entry of days (d, a-b, */s, a/s, a-b/s) to
// days 0 (Sunday) to 6, in Spring's numbering where 7 is Sunday too.
func expandDays(item string) ([]int, error) {
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		s, err := strconv.Atoi(stepText)
		if err != nil || s < 1 {
			return nil, fmt.Errorf("step %q must be a positive number", stepText)
		}
		step = s
	}
	lo, hi := 0, 7
	switch {
	case rng == "*":
		lo, hi = 0, 6
	case strings.Contains(rng, "-"):
		a, b, _ := strings.Cut(rng, "-")
		var err error
		if lo, err = rawDay(a); err != nil {
			return nil, err
		}
		if hi, err = rawDay(b); err != nil {
			return nil, err
		}
		if lo > hi {
			return nil, fmt.Errorf("range %q runs backwards", rng)
		}
	default:
		d, err := rawDay(rng)
		if err != nil {
			return nil, err
		}
		lo = d
		if !hasStep {
			hi = d
		}
	}
	seen := map[int]bool{}
	var days []int
	for d := lo; d <= hi; d += step {
		if !seen[d%7] {
			seen[d%7] = true
			days = append(days, d%7)
		}
	}
	return days, nil
}

// rawDay reads 0-7 or SUN-SAT without folding 7 onto 0 (ranges may end on 7).
func rawDay(s string) (int, error) {
	if d, ok := dayNames[s]; ok {
		return d, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 7 {
		return 0, fmt.Errorf("%q is not a day of week (0-7 or SUN-SAT)", s)
	}
	return n, nil
}
