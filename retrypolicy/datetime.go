package retrypolicy

import (
	"strconv"
	"strings"
	"time"
)

// Zone forms of a date-time, kept so that String reproduces the input's form.
const (
	zoneNone   uint8 = iota // no offset: UTC
	zoneZ                   // "Z"
	zoneOffset              // "+hh:mm" or "-hh:mm"
)

// dateTime is an ISO-8601 date-time as written in a repeating interval:
// YYYY-MM-DDThh:mm:ss[.f{1,9}][Z|±hh:mm].
type dateTime struct {
	year, month, day     int
	hour, minute, second int
	nanos                int
	zone                 uint8
	offset               int // minutes east of UTC, for zoneOffset
}

const dateTimeForm = "expected YYYY-MM-DDThh:mm:ss with an optional fraction of 1 to 9 digits and an optional offset Z or ±hh:mm"

// parseDateTime returns the date-time or a non-empty reason.
func parseDateTime(s string) (dateTime, string) {
	var dt dateTime
	if len(s) < 19 {
		return dt, dateTimeForm
	}
	num := func(from, to int) (int, bool) {
		for i := from; i < to; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
		}
		v, _ := strconv.Atoi(s[from:to])
		return v, true
	}
	sep := func(i int, c byte) bool { return s[i] == c }
	var ok [6]bool
	dt.year, ok[0] = num(0, 4)
	dt.month, ok[1] = num(5, 7)
	dt.day, ok[2] = num(8, 10)
	dt.hour, ok[3] = num(11, 13)
	dt.minute, ok[4] = num(14, 16)
	dt.second, ok[5] = num(17, 19)
	if ok != [6]bool{true, true, true, true, true, true} ||
		!sep(4, '-') || !sep(7, '-') || !sep(13, ':') || !sep(16, ':') {
		return dt, dateTimeForm
	}
	if s[10] != 'T' {
		if s[10] == 't' {
			return dt, "lower-case 't' not allowed; use 'T'"
		}
		return dt, dateTimeForm
	}
	switch {
	case dt.month < 1 || dt.month > 12:
		return dt, "month " + s[5:7] + " out of range"
	case dt.day < 1 || dt.day > daysIn(dt.year, time.Month(dt.month)):
		return dt, "day " + s[8:10] + " out of range for " + s[0:7]
	case dt.hour > 23:
		return dt, "hour " + s[11:13] + " out of range"
	case dt.minute > 59:
		return dt, "minute " + s[14:16] + " out of range"
	case dt.second > 59:
		return dt, "second " + s[17:19] + " out of range"
	}
	rest := s[19:]
	if strings.HasPrefix(rest, ".") {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		frac := rest[1:i]
		if frac == "" {
			return dt, "expected digits after '.'"
		}
		if len(frac) > 9 {
			return dt, "more than 9 fractional digits (nanosecond precision)"
		}
		n, _ := strconv.Atoi(frac + strings.Repeat("0", 9-len(frac)))
		dt.nanos = n
		rest = rest[i:]
	}
	switch {
	case rest == "":
	case rest == "Z":
		dt.zone = zoneZ
	case rest == "z":
		return dt, "lower-case 'z' not allowed; use 'Z'"
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
		isDigit(rest[1]) && isDigit(rest[2]) && isDigit(rest[4]) && isDigit(rest[5]):
		h, _ := strconv.Atoi(rest[1:3])
		m, _ := strconv.Atoi(rest[4:6])
		if h > 23 || m > 59 {
			return dt, "offset " + rest + " out of range"
		}
		dt.zone = zoneOffset
		dt.offset = h*60 + m
		if rest[0] == '-' {
			dt.offset = -dt.offset
		}
	default:
		return dt, "unexpected " + strconv.Quote(rest) + " after the time; " + dateTimeForm
	}
	return dt, ""
}

// time returns the instant; without an offset the date-time is UTC.
func (dt dateTime) time() time.Time {
	loc := time.UTC
	if dt.zone == zoneOffset {
		loc = time.FixedZone("", dt.offset*60)
	}
	return time.Date(dt.year, time.Month(dt.month), dt.day, dt.hour, dt.minute, dt.second, dt.nanos, loc)
}

// String returns the canonical form: the fraction without trailing zeros,
// the zone as written ("-00:00" becomes "+00:00").
func (dt dateTime) String() string {
	var b strings.Builder
	two := func(v int) {
		b.WriteByte(byte('0' + v/10))
		b.WriteByte(byte('0' + v%10))
	}
	y := strconv.Itoa(dt.year)
	b.WriteString(strings.Repeat("0", 4-len(y)) + y)
	b.WriteByte('-')
	two(dt.month)
	b.WriteByte('-')
	two(dt.day)
	b.WriteByte('T')
	two(dt.hour)
	b.WriteByte(':')
	two(dt.minute)
	b.WriteByte(':')
	two(dt.second)
	if dt.nanos != 0 {
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(pad9(int64(dt.nanos)), "0"))
	}
	switch dt.zone {
	case zoneZ:
		b.WriteByte('Z')
	case zoneOffset:
		off := dt.offset
		if off < 0 {
			b.WriteByte('-')
			off = -off
		} else {
			b.WriteByte('+')
		}
		two(off / 60)
		b.WriteByte(':')
		two(off % 60)
	}
	return b.String()
}
