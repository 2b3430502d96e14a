package retrypolicy

import (
	"math/bits"
	"time"
)

// Limits on the offsets produced by multiplying a duration by a repetition
// index. Anything beyond them is treated as "out of range" (infinitely far
// in the future for a start-anchored interval, infinitely far in the past
// for an end-anchored one). They are far beyond any real schedule yet keep
// every computation inside int64 and inside the years time.Time supports.
const (
	horizonYears   = 4_000_000_000
	maxMonthsShift = 12 * horizonYears
	maxDaysShift   = 366 * horizonYears
	maxSecsShift   = 366 * 86400 * horizonYears
)

// mulLimit returns k·v when it is at most limit (k, v >= 0).
func mulLimit(k, v, limit int64) (int64, bool) {
	if v == 0 || k == 0 {
		return 0, true
	}
	if k > limit/v {
		return 0, false
	}
	return k * v, true
}

// elapsedSeconds returns the elapsed part of d (weeks, hours, minutes and
// whole seconds) in seconds. For parsed durations it is at most about
// 1.3e15, well inside int64.
func (d Duration) elapsedSeconds() int64 {
	return d.fields[fWeeks]*7*86400 + d.fields[fHours]*3600 + d.fields[fMinutes]*60 + d.fields[fSeconds]
}

// shift returns t + sign·k·d (sign is 1 or -1, k >= 0), where k·d is d with
// every field multiplied by k, applied once in the order years, months,
// days, elapsed time. It reports false when k·d is out of range.
func (d Duration) shift(t time.Time, k, sign int64) (time.Time, bool) {
	years, ok1 := mulLimit(k, d.fields[fYears], horizonYears)
	months, ok2 := mulLimit(k, d.fields[fMonths], maxMonthsShift)
	days, ok3 := mulLimit(k, d.fields[fDays], maxDaysShift)
	secs, ok4 := mulLimit(k, d.elapsedSeconds(), maxSecsShift)
	if !(ok1 && ok2 && ok3 && ok4) {
		return time.Time{}, false
	}
	// k·nanos may exceed int64: compute it in 128 bits and split it into
	// whole seconds and a remainder. hi < 1e9 because k < 2^63 and
	// nanos < 1e9, so Div64 cannot panic.
	hi, lo := bits.Mul64(uint64(k), uint64(d.nanos))
	q, nanos := bits.Div64(hi, lo, 1e9)
	if q > maxSecsShift || secs > maxSecsShift-int64(q) {
		return time.Time{}, false
	}
	secs += int64(q)

	if years != 0 {
		t = addMonthsClamped(t, sign*years*12)
	}
	if months != 0 {
		t = addMonthsClamped(t, sign*months)
	}
	if days != 0 {
		y, m, dd := t.Date()
		h, mi, s := t.Clock()
		t = time.Date(y, m, dd+int(sign*days), h, mi, s, t.Nanosecond(), t.Location())
	}
	if secs != 0 || nanos != 0 {
		t = time.Unix(t.Unix()+sign*secs, int64(t.Nanosecond())+sign*int64(nanos)).In(t.Location())
	}
	return t, true
}

// addMonthsClamped adds m calendar months to t, keeping the wall-clock time
// and clamping the day to the last day of the resulting month.
func addMonthsClamped(t time.Time, m int64) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	total := int64(y)*12 + int64(mo) - 1 + m
	ny := floorDiv(total, 12)
	nm := time.Month(total-ny*12) + 1
	if dim := daysIn(int(ny), nm); d > dim {
		d = dim
	}
	return time.Date(int(ny), nm, d, h, mi, s, t.Nanosecond(), t.Location())
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// daysIn returns the number of days in month m of year y.
func daysIn(y int, m time.Month) int {
	switch m {
	case time.February:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	default:
		return 31
	}
}
