package retrypolicy

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// maxField is the largest number accepted in any integer field of a
// duration or in a repetition count (Java's Integer.MAX_VALUE).
const maxField = math.MaxInt32

// Field indexes, in the order in which they must appear.
const (
	fYears = iota
	fMonths
	fWeeks
	fDays
	fHours
	fMinutes
	fSeconds
	numFields
)

var designators = [numFields]byte{'Y', 'M', 'W', 'D', 'H', 'M', 'S'}

// Duration is an ISO-8601 duration as written: PnYnMnDTnHnMnS (any subset)
// or PnW. It keeps the fields the user gave instead of a normalised length,
// because years, months and days have no fixed length and because String
// must reproduce the input's fields (PT90M stays PT90M).
//
// Values are produced by [ParseDuration]. The zero Duration has no fields;
// it behaves like PT0S and its String is "PT0S".
type Duration struct {
	fields [numFields]int64
	// nanos is the fraction of the seconds field, in nanoseconds.
	nanos int64
	// present has bit i set when field i was written.
	present uint8
}

// ParseDuration parses an ISO-8601 duration such as "PT5M", "P1Y2M3DT4H5M6.7S"
// or "P2W". See the package documentation for the exact rules.
func ParseDuration(s string) (Duration, error) {
	d, reason := parseDuration(s)
	if reason != "" {
		return Duration{}, newError("duration", s, "%s", reason)
	}
	return d, nil
}

// describeByte names an unexpected byte and, where it helps, what rule it
// breaks.
func describeByte(c byte) string {
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return "spaces are not allowed"
	case c == '-' || c == '+':
		return "a sign is not allowed"
	case c >= 'a' && c <= 'z':
		return "lower-case " + strconv.QuoteRune(rune(c)) + " not allowed; designators are upper case"
	case c == ',':
		return "decimal comma not supported; use '.'"
	default:
		return "unexpected character " + strconv.QuoteRuneToASCII(rune(c))
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseDigits parses a run of ASCII digits as a value in [0, max]. It
// reports false when the value is larger than max.
func parseDigits(s string, max int64) (int64, bool) {
	var v int64
	for i := 0; i < len(s); i++ {
		v = v*10 + int64(s[i]-'0')
		if v > max {
			return 0, false
		}
	}
	return v, true
}

// parseDuration returns the duration or a non-empty reason.
func parseDuration(s string) (Duration, string) {
	var d Duration
	if s == "" {
		return d, "empty"
	}
	if s[0] != 'P' {
		if s[0] == 'p' {
			return d, "lower-case 'p' not allowed; designators are upper case"
		}
		if s[0] == '-' || s[0] == '+' || s[0] == ' ' || s[0] == '\t' {
			return d, describeByte(s[0])
		}
		if isDigit(s[0]) && looksLikeDuration(s) {
			return d, "must start with 'P': " + durationHint(s)
		}
		return d, "must start with 'P'"
	}
	inTime := false
	last := -1
	i := 1
	for i < len(s) {
		c := s[i]
		if c == 'T' {
			if inTime {
				return d, "'T' appears more than once"
			}
			inTime = true
			i++
			if i == len(s) {
				return d, "'T' must be followed by at least one of H, M or S"
			}
			continue
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		digits := s[start:i]
		if digits == "" {
			if c == '.' {
				return d, "a number must have digits before '.'"
			}
			if c >= 'A' && c <= 'Z' {
				return d, "designator " + strconv.QuoteRune(rune(c)) + " without a number"
			}
			return d, describeByte(c)
		}
		var frac string
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			if s[i] == ',' {
				return d, describeByte(',')
			}
			i++
			fs := i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			frac = s[fs:i]
			if frac == "" {
				return d, "expected digits after '.'"
			}
			if len(frac) > 9 {
				return d, "more than 9 fractional digits (nanosecond precision)"
			}
		}
		if i == len(s) {
			return d, "number " + strconv.Quote(s[start:i]) + " has no designator"
		}
		c = s[i]
		f := -1
		if inTime {
			switch c {
			case 'H':
				f = fHours
			case 'M':
				f = fMinutes
			case 'S':
				f = fSeconds
			case 'Y', 'W', 'D':
				return d, strconv.QuoteRune(rune(c)) + " must come before 'T'"
			}
		} else {
			switch c {
			case 'Y':
				f = fYears
			case 'M':
				f = fMonths
			case 'W':
				f = fWeeks
			case 'D':
				f = fDays
			case 'H', 'S':
				return d, strconv.QuoteRune(rune(c)) + " must come after 'T'"
			}
		}
		if f < 0 {
			if c == 'T' {
				return d, "number " + strconv.Quote(s[start:i]) + " before 'T' has no designator"
			}
			return d, describeByte(c)
		}
		i++
		if f == fWeeks && d.present != 0 || f != fWeeks && d.present&(1<<fWeeks) != 0 {
			return d, "weeks cannot be combined with other fields"
		}
		if f == last {
			return d, "field " + strconv.QuoteRune(rune(c)) + " appears more than once"
		}
		if f < last {
			return d, "field " + strconv.QuoteRune(rune(c)) + " out of order (order is Y, M, D, T, H, M, S)"
		}
		if frac != "" && f != fSeconds {
			return d, "fraction allowed only on seconds"
		}
		v, ok := parseDigits(digits, maxField)
		if !ok {
			return d, "number " + digits + " too large (maximum 2147483647)"
		}
		d.fields[f] = v
		d.present |= 1 << f
		if frac != "" {
			n, _ := parseDigits(frac, math.MaxInt64)
			for k := len(frac); k < 9; k++ {
				n *= 10
			}
			d.nanos = n
		}
		last = f
	}
	if d.present == 0 {
		return d, "no fields after 'P'"
	}
	return d, ""
}

// String returns the duration in canonical ISO-8601 form: the fields that
// were written, without leading zeros, and the fraction of the seconds
// without trailing zeros. ParseDuration(d.String()) equals d.
func (d Duration) String() string {
	if d.present == 0 {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteByte('P')
	for f := 0; f < numFields; f++ {
		if f == fHours && d.present&(1<<fHours|1<<fMinutes|1<<fSeconds) != 0 {
			b.WriteByte('T')
		}
		if d.present&(1<<f) == 0 {
			continue
		}
		b.WriteString(strconv.FormatInt(d.fields[f], 10))
		if f == fSeconds && d.nanos != 0 {
			b.WriteByte('.')
			b.WriteString(strings.TrimRight(pad9(d.nanos), "0"))
		}
		b.WriteByte(designators[f])
	}
	return b.String()
}

func pad9(n int64) string {
	s := strconv.FormatInt(n, 10)
	return strings.Repeat("0", 9-len(s)) + s
}

// IsZero reports whether every field of d is zero (P0D, PT0S, ...).
func (d Duration) IsZero() bool {
	return d.fields == [numFields]int64{} && d.nanos == 0
}

// Years returns the years field (0 when not written).
func (d Duration) Years() int64 { return d.fields[fYears] }

// Months returns the months field (0 when not written).
func (d Duration) Months() int64 { return d.fields[fMonths] }

// Weeks returns the weeks field (0 when not written).
func (d Duration) Weeks() int64 { return d.fields[fWeeks] }

// Days returns the days field (0 when not written).
func (d Duration) Days() int64 { return d.fields[fDays] }

// Hours returns the hours field (0 when not written).
func (d Duration) Hours() int64 { return d.fields[fHours] }

// Minutes returns the minutes field (0 when not written).
func (d Duration) Minutes() int64 { return d.fields[fMinutes] }

// Seconds returns the whole part of the seconds field (0 when not written).
func (d Duration) Seconds() int64 { return d.fields[fSeconds] }

// Nanoseconds returns the fractional part of the seconds field in
// nanoseconds, in [0, 999999999].
func (d Duration) Nanoseconds() int64 { return d.nanos }

// AddTo returns t + d: years, then months (both clamped to the end of the
// month), then days, as calendar fields in t's location, then weeks, hours,
// minutes and seconds as elapsed time. The result is in t's location.
func (d Duration) AddTo(t time.Time) time.Time {
	r, _ := d.shift(t, 1, 1)
	return r
}

// SubtractFrom returns t − d, applying the negated fields in the same order
// as AddTo: 2026-03-31 − P1M = 2026-02-28.
func (d Duration) SubtractFrom(t time.Time) time.Time {
	r, _ := d.shift(t, 1, -1)
	return r
}
