package retrypolicy

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	kDur   = "duration"
	kRI    = "repeating interval"
	kCycle = "retry cycle"
	none   = "none" // Next reports finished
)

// vector is one parse case. Valid vectors (err == "") are checked for their
// canonical String, for the round trip, and for the time computations they
// name.
type vector struct {
	kind string
	in   string
	err  string // expected error substring; "" for a valid input
	str  string // expected String(); "" means the input itself

	// duration: AddTo(base) (or SubtractFrom when sub) equals want.
	// retry cycle: NextRetryAt(base, left) equals want.
	base, want string
	sub        bool
	left       int

	// repeating interval: Next(anchor, now) equals want (none = finished).
	anchor, now string

	// retry cycle: Executions().
	execs     int
	unbounded bool
}

var vectors = []vector{
	// ---- durations: valid ----
	{kind: kDur, in: "PT5M", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kDur, in: "PT90M", base: "2026-01-31T10:00:00Z", want: "2026-01-31T11:30:00Z"},
	{kind: kDur, in: "PT36H", base: "2026-01-31T00:00:00Z", want: "2026-02-01T12:00:00Z"},
	{kind: kDur, in: "PT1M30S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:01:30Z"},
	{kind: kDur, in: "P1M", base: "2026-01-31T10:00:00Z", want: "2026-02-28T10:00:00Z"},
	{kind: kDur, in: "P1M", base: "2024-01-31T10:00:00Z", want: "2024-02-29T10:00:00Z"},
	{kind: kDur, in: "P1M", base: "2026-03-31T10:00:00Z", want: "2026-02-28T10:00:00Z", sub: true},
	{kind: kDur, in: "P1M", base: "2024-03-31T10:00:00Z", want: "2024-02-29T10:00:00Z", sub: true},
	{kind: kDur, in: "P2M", base: "2026-12-31T10:00:00Z", want: "2027-02-28T10:00:00Z"},
	{kind: kDur, in: "P13M", base: "2026-01-31T10:00:00Z", want: "2027-02-28T10:00:00Z"},
	{kind: kDur, in: "P1Y", base: "2024-02-29T10:00:00Z", want: "2025-02-28T10:00:00Z"},
	{kind: kDur, in: "P4Y", base: "2024-02-29T10:00:00Z", want: "2028-02-29T10:00:00Z"},
	{kind: kDur, in: "P1Y1M", base: "2024-02-29T10:00:00Z", want: "2025-03-28T10:00:00Z"},
	{kind: kDur, in: "P30D", base: "2026-01-31T10:00:00Z", want: "2026-03-02T10:00:00Z"},
	{kind: kDur, in: "P1W", base: "2026-03-01T10:00:00Z", want: "2026-03-08T10:00:00Z"},
	{kind: kDur, in: "P2W", base: "2026-02-20T10:00:00Z", want: "2026-03-06T10:00:00Z"},
	{kind: kDur, in: "PT0.5S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:00.5Z"},
	{kind: kDur, in: "PT1.123456789S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:01.123456789Z"},
	{kind: kDur, in: "PT1.123456789S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T09:59:58.876543211Z", sub: true},
	{kind: kDur, in: "PT1.500S", str: "PT1.5S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:01.5Z"},
	{kind: kDur, in: "PT0.000000001S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:00.000000001Z"},
	{kind: kDur, in: "P1Y2M3DT4H5M6.7S", base: "2026-01-31T10:00:00Z", want: "2027-04-03T14:05:06.7Z"},
	{kind: kDur, in: "P1DT2H", base: "2026-01-31T23:00:00+02:00", want: "2026-02-02T01:00:00+02:00"},
	{kind: kDur, in: "P1M", base: "2026-01-31T23:30:00-02:00", want: "2026-02-28T23:30:00-02:00"},
	{kind: kDur, in: "P0D", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:00Z"},
	{kind: kDur, in: "PT0S", base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:00Z"},
	{kind: kDur, in: "P01M", str: "P1M"},
	{kind: kDur, in: "P1Y0M", str: "P1Y0M"},
	{kind: kDur, in: "PT2147483647S"},
	{kind: kDur, in: "P2147483647Y2147483647M2147483647DT2147483647H2147483647M2147483647.999999999S"},
	{kind: kDur, in: "P2147483647W"},

	// ---- durations: rejected ----
	{kind: kDur, in: "P1W2D", err: "weeks cannot be combined with other fields"},
	{kind: kDur, in: "P2D1W", err: "weeks cannot be combined with other fields"},
	{kind: kDur, in: "P1WT1H", err: "weeks cannot be combined with other fields"},
	{kind: kDur, in: "PT5.5M", err: "fraction allowed only on seconds"},
	{kind: kDur, in: "P1.5D", err: "fraction allowed only on seconds"},
	{kind: kDur, in: "P", err: "no fields after 'P'"},
	{kind: kDur, in: "PT", err: "'T' must be followed by at least one of H, M or S"},
	{kind: kDur, in: "P1DT", err: "'T' must be followed by at least one of H, M or S"},
	{kind: kDur, in: "pt5m", err: "lower-case 'p' not allowed"},
	{kind: kDur, in: "Pt5M", err: "lower-case 't' not allowed"},
	{kind: kDur, in: "PT5m", err: "lower-case 'm' not allowed"},
	{kind: kDur, in: "-PT5M", err: "a sign is not allowed"},
	{kind: kDur, in: "+PT5M", err: "a sign is not allowed"},
	{kind: kDur, in: "PT-5M", err: "a sign is not allowed"},
	{kind: kDur, in: "PT1H1H", err: "field 'H' appears more than once"},
	{kind: kDur, in: "P1M1Y", err: "field 'Y' out of order"},
	{kind: kDur, in: "PT5M1H", err: "field 'H' out of order"},
	{kind: kDur, in: "PT5M ", err: "spaces are not allowed"},
	{kind: kDur, in: "P T5M", err: "spaces are not allowed"},
	{kind: kDur, in: " PT5M", err: "spaces are not allowed"},
	{kind: kDur, in: "PT1.1234567890S", err: "more than 9 fractional digits"},
	{kind: kDur, in: "PT0,5S", err: "decimal comma not supported"},
	{kind: kDur, in: "PT.5S", err: "a number must have digits before '.'"},
	{kind: kDur, in: "PT5.S", err: "expected digits after '.'"},
	{kind: kDur, in: "P2147483648Y", err: "number 2147483648 too large"},
	{kind: kDur, in: "PT99999999999999999999S", err: "too large"},
	{kind: kDur, in: "P1", err: `number "1" has no designator`},
	{kind: kDur, in: "P1T1H", err: "before 'T' has no designator"},
	{kind: kDur, in: "PM", err: "designator 'M' without a number"},
	{kind: kDur, in: "P1H", err: "'H' must come after 'T'"},
	{kind: kDur, in: "PT1D", err: "'D' must come before 'T'"},
	{kind: kDur, in: "PT1HT1M", err: "'T' appears more than once"},
	{kind: kDur, in: "P1X", err: "unexpected character 'X'"},
	{kind: kDur, in: "", err: "empty"},
	{kind: kDur, in: "5M", err: "must start with 'P'"},

	// ---- repeating intervals: valid ----
	{kind: kRI, in: "R3/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T00:00:00Z", want: "2026-01-01T10:00:00Z"},
	{kind: kRI, in: "R3/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T10:00:00Z", want: "2026-01-01T20:00:00Z"},
	{kind: kRI, in: "R3/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T15:00:00Z", want: "2026-01-01T20:00:00Z"},
	{kind: kRI, in: "R3/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-02T05:00:00Z", want: "2026-01-02T06:00:00Z"},
	{kind: kRI, in: "R3/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-02T06:00:00Z", want: none},
	{kind: kRI, in: "R0/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2025-01-01T00:00:00Z", want: none},
	{kind: kRI, in: "R03/PT1H", str: "R3/PT1H", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T00:30:00Z", want: "2026-01-01T01:00:00Z"},
	{kind: kRI, in: "R/PT10H", anchor: "2026-01-01T00:00:00Z", now: "2030-01-01T00:00:00Z", want: "2030-01-01T06:00:00Z"},
	{kind: kRI, in: "R/PT0.000000001S", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T00:00:01Z", want: "2026-01-01T00:00:01.000000001Z"},
	{kind: kRI, in: "R/P1W", anchor: "2026-01-01T00:00:00Z", now: "2026-01-20T00:00:00Z", want: "2026-01-22T00:00:00Z"},
	{kind: kRI, in: "R/PT0S", anchor: "2026-01-01T00:00:00Z", now: "2026-01-01T00:00:00Z", want: none},
	{kind: kRI, in: "R5/2026-01-31T10:00:00/P1M", now: "2026-01-01T00:00:00Z", want: "2026-01-31T10:00:00Z"},
	{kind: kRI, in: "R5/2026-01-31T10:00:00/P1M", now: "2026-01-31T10:00:00Z", want: "2026-02-28T10:00:00Z"},
	{kind: kRI, in: "R5/2026-01-31T10:00:00/P1M", now: "2026-02-28T10:00:00Z", want: "2026-03-31T10:00:00Z"},
	{kind: kRI, in: "R5/2026-01-31T10:00:00/P1M", now: "2026-04-30T10:00:00Z", want: "2026-05-31T10:00:00Z"},
	{kind: kRI, in: "R5/2026-01-31T10:00:00/P1M", now: "2026-06-30T10:00:00Z", want: none},
	{kind: kRI, in: "R0/2026-01-31T10:00:00/P1M", now: "2026-01-01T00:00:00Z", want: "2026-01-31T10:00:00Z"},
	{kind: kRI, in: "R0/2026-01-31T10:00:00/P1M", now: "2026-01-31T10:00:00Z", want: none},
	{kind: kRI, in: "R2/2024-01-31T00:00:00Z/P1M", now: "2024-01-31T00:00:00Z", want: "2024-02-29T00:00:00Z"},
	{kind: kRI, in: "R/2026-01-31T10:00:00Z/P1M", now: "2030-02-01T00:00:00Z", want: "2030-02-28T10:00:00Z"},
	{kind: kRI, in: "R3/P1M/2026-03-31T00:00:00Z", now: "2025-01-01T00:00:00Z", want: "2025-12-31T00:00:00Z"},
	{kind: kRI, in: "R3/P1M/2026-03-31T00:00:00Z", now: "2026-02-01T00:00:00Z", want: "2026-02-28T00:00:00Z"},
	{kind: kRI, in: "R3/P1M/2026-03-31T00:00:00Z", now: "2026-03-31T00:00:00Z", want: none},
	{kind: kRI, in: "R3/P1M/2024-03-31T00:00:00Z", now: "2024-02-01T00:00:00Z", want: "2024-02-29T00:00:00Z"},
	{kind: kRI, in: "R/P1D/2026-03-31T00:00:00Z", now: "2026-03-15T12:00:00Z", want: "2026-03-16T00:00:00Z"},
	{kind: kRI, in: "R2/2026-01-01T00:00:00Z/2026-01-01T06:00:00Z", now: "2026-01-01T06:00:00Z", want: "2026-01-01T12:00:00Z"},
	{kind: kRI, in: "R2/2026-01-01T00:00:00Z/2026-01-01T06:00:00Z", now: "2026-01-01T12:00:00Z", want: none},
	{kind: kRI, in: "2026-01-31T10:00:00/PT1H", now: "2026-01-01T00:00:00Z", want: "2026-01-31T11:00:00Z"},
	{kind: kRI, in: "2026-01-31T10:00:00/PT1H", now: "2026-01-31T11:00:00Z", want: none},
	{kind: kRI, in: "2026-01-31T10:00:00+02:00/P1M", now: "2026-01-01T00:00:00Z", want: "2026-02-28T08:00:00Z"},
	{kind: kRI, in: "2026-01-01T00:00:00Z/2026-01-02T00:00:00Z", now: "2025-12-31T00:00:00Z", want: "2026-01-02T00:00:00Z"},
	{kind: kRI, in: "P1D/2026-01-02T00:00:00Z", now: "2025-12-31T00:00:00Z", want: "2026-01-02T00:00:00Z"},
	{kind: kRI, in: "2026-01-31T10:00:00.500-05:30/PT1S", str: "2026-01-31T10:00:00.5-05:30/PT1S", now: "2026-01-01T00:00:00Z", want: "2026-01-31T15:30:01.5Z"},
	{kind: kRI, in: "R1/2026-01-01T00:00:00-00:00/PT1H", str: "R1/2026-01-01T00:00:00+00:00/PT1H", now: "2026-01-01T00:00:00Z", want: "2026-01-01T01:00:00Z"},

	// ---- repeating intervals: rejected ----
	{kind: kRI, in: "R-1/PT1M", err: "must be R followed by digits"},
	{kind: kRI, in: "Rx/PT1M", err: "must be R followed by digits"},
	{kind: kRI, in: "R3/", err: "part 2 is empty"},
	{kind: kRI, in: "R/", err: "part 2 is empty"},
	{kind: kRI, in: "R3/PT1M/2026-01-01T00:00:00/x", err: "more than three '/'-separated parts"},
	{kind: kRI, in: "PT1M", err: "missing '/'"},
	{kind: kRI, in: "R3", err: "missing '/'"},
	{kind: kRI, in: "r3/PT1M", err: "lower-case 'r' not allowed"},
	{kind: kRI, in: "R3/pt1m", err: `part 2: duration "pt1m": lower-case 'p' not allowed`},
	{kind: kRI, in: "R3/PT5.5M", err: "fraction allowed only on seconds"},
	{kind: kRI, in: "R3/-PT5M", err: "a sign is not allowed"},
	{kind: kRI, in: "R3/2026-01-01T00:00:00", err: "needs a duration"},
	{kind: kRI, in: "R3/PT1M/PT2M", err: "two durations"},
	{kind: kRI, in: "R3/R3/PT1M", err: "the repetition count must be the first part"},
	{kind: kRI, in: "PT1M/PT1M/PT1M", err: "three parts need a leading repetition count"},
	{kind: kRI, in: "2026-01-01T00:00:00/2025-01-01T00:00:00", err: "is before start"},
	{kind: kRI, in: "2026-13-01T00:00:00/PT1M", err: "month 13 out of range"},
	{kind: kRI, in: "2026-02-29T00:00:00/PT1M", err: "day 29 out of range"},
	{kind: kRI, in: "2026-01-01T24:00:00/PT1M", err: "hour 24 out of range"},
	{kind: kRI, in: "2026-01-01t00:00:00/PT1M", err: "lower-case 't' not allowed"},
	{kind: kRI, in: "2026-01-01T00:00:00z/PT1M", err: "lower-case 'z' not allowed"},
	{kind: kRI, in: "2026-01-01T00:00/PT1M", err: "expected YYYY-MM-DDThh:mm:ss"},
	{kind: kRI, in: "2026-01-01T00:00:00+2:00/PT1M", err: "unexpected \"+2:00\""},
	{kind: kRI, in: "2026-01-01T00:00:00.1234567890Z/PT1M", err: "more than 9 fractional digits"},
	{kind: kRI, in: "R2147483648/PT1M", err: "repetition count 2147483648 too large"},
	{kind: kRI, in: "x/PT1M", err: "is neither a duration"},

	// ---- retry cycles: valid ----
	{kind: kCycle, in: "R5/PT5M", execs: 5, left: 5, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kCycle, in: "R5/PT5M", execs: 5, left: 1, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kCycle, in: " R5/PT5M ", str: "R5/PT5M", execs: 5, left: 3, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kCycle, in: "R0/PT5M", execs: 1, left: 1, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kCycle, in: "R1/PT1M", execs: 1, left: 1, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:01:00Z"},
	{kind: kCycle, in: "R/PT1M", unbounded: true, left: 1000, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:01:00Z"},
	{kind: kCycle, in: "R3/P1W", execs: 3, left: 2, base: "2026-01-31T10:00:00Z", want: "2026-02-07T10:00:00Z"},
	{kind: kCycle, in: "R3/P1M", execs: 3, left: 2, base: "2024-01-31T10:00:00Z", want: "2024-02-29T10:00:00Z"},
	{kind: kCycle, in: "PT5M", execs: 2, left: 2, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:05:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 4, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:10:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 3, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:17:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 2, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:20:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 1, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:20:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 0, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:20:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 5, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:10:00Z"},
	{kind: kCycle, in: "PT10M,PT17M,PT20M", execs: 4, left: 10, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:10:00Z"},
	{kind: kCycle, in: " PT10M , PT17M ,\tPT20M ", str: "PT10M,PT17M,PT20M", execs: 4, left: 3, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:17:00Z"},
	{kind: kCycle, in: "P1M,PT1H", execs: 3, left: 3, base: "2026-01-31T10:00:00Z", want: "2026-02-28T10:00:00Z"},
	{kind: kCycle, in: "P1M,PT1H", execs: 3, left: 3, base: "2024-01-31T10:00:00Z", want: "2024-02-29T10:00:00Z"},
	{kind: kCycle, in: "P1M,PT1H", execs: 3, left: 2, base: "2024-01-31T10:00:00Z", want: "2024-01-31T11:00:00Z"},
	{kind: kCycle, in: "PT0.5S,PT1.123456789S", execs: 3, left: 2, base: "2026-01-31T10:00:00Z", want: "2026-01-31T10:00:01.123456789Z"},
	{kind: kCycle, in: "PT090M,P01D", str: "PT90M,P1D", execs: 3, left: 3, base: "2026-01-31T10:00:00Z", want: "2026-01-31T11:30:00Z"},

	// ---- retry cycles: rejected ----
	{kind: kCycle, in: "", err: "empty"},
	{kind: kCycle, in: "   ", err: "empty"},
	{kind: kCycle, in: "PT1M,", err: "entry 2 is empty"},
	{kind: kCycle, in: ",PT1M", err: "entry 1 is empty"},
	{kind: kCycle, in: "PT1M,,PT2M", err: "entry 2 is empty"},
	{kind: kCycle, in: "PT1M, ,PT2M", err: "entry 2 is empty"},
	{kind: kCycle, in: "R5/PT5M,PT1M", err: `entry 1 "R5/PT5M": list entries must be durations`},
	{kind: kCycle, in: "PT10M,PT5.5M", err: `entry 2: duration "PT5.5M": fraction allowed only on seconds`},
	{kind: kCycle, in: "PT5.5M", err: "fraction allowed only on seconds"},
	{kind: kCycle, in: "R3/2026-01-01T00:00:00Z/PT1M", err: "a retry cycle cannot have a start or end date"},
	{kind: kCycle, in: "R3/PT1M/2026-01-01T00:00:00Z", err: "a retry cycle cannot have a start or end date"},
	{kind: kCycle, in: "2026-01-01T00:00:00Z/PT1M", err: "an interval without R is not a retry cycle"},
	{kind: kCycle, in: "R5", err: "missing '/'"},
	{kind: kCycle, in: "pt5m", err: "lower-case 'p' not allowed"},
	{kind: kCycle, in: "PT5M PT6M", err: "spaces are not allowed"},
	{kind: kCycle, in: "R3/PT1M/2026-01-01T00:00:00/x", err: "more than three '/'-separated parts"},
	{kind: kCycle, in: "R-1/PT1M", err: "must be R followed by digits"},
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return tm
}

// parseAny parses in as kind and returns the value, its String and the error.
func parseAny(kind, in string) (any, string, error) {
	switch kind {
	case kDur:
		v, err := ParseDuration(in)
		return v, v.String(), err
	case kRI:
		v, err := ParseRepeatingInterval(in)
		return v, v.String(), err
	default:
		v, err := ParseCycle(in)
		return v, v.String(), err
	}
}

func TestVectors(t *testing.T) {
	if len(vectors) < 80 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.kind+"/"+v.in, func(t *testing.T) {
			val, str, err := parseAny(v.kind, v.in)
			if v.err != "" {
				if err == nil {
					t.Fatalf("parsed as %q, want error containing %q", str, v.err)
				}
				if !strings.Contains(err.Error(), v.err) {
					t.Errorf("error %q does not contain %q", err, v.err)
				}
				prefix := "retrypolicy: invalid " + v.kind + " " + strconv.Quote(v.in) + ": "
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error %q does not start with %q", err, prefix)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
				}
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Input != v.in || pe.Kind != v.kind {
					t.Errorf("errors.As gave %#v", pe)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			wantStr := v.str
			if wantStr == "" {
				wantStr = v.in
			}
			if str != wantStr {
				t.Errorf("String() = %q, want %q", str, wantStr)
			}
			again, str2, err := parseAny(v.kind, str)
			if err != nil || !reflect.DeepEqual(again, val) || str2 != str {
				t.Errorf("round trip of %q: %v, %q, equal=%v", str, err, str2, reflect.DeepEqual(again, val))
			}
			switch v.kind {
			case kDur:
				if v.base == "" {
					return
				}
				d := val.(Duration)
				base, want := mustTime(t, v.base), mustTime(t, v.want)
				got := d.AddTo(base)
				if v.sub {
					got = d.SubtractFrom(base)
				}
				if !got.Equal(want) {
					t.Errorf("sub=%v: %s → %s, want %s", v.sub, v.base, got.Format(time.RFC3339Nano), v.want)
				}
				if got.Location() != base.Location() {
					t.Errorf("location changed from %v to %v", base.Location(), got.Location())
				}
			case kRI:
				ri := val.(RepeatingInterval)
				var anchor time.Time
				if v.anchor != "" {
					anchor = mustTime(t, v.anchor)
				}
				got, ok := ri.Next(anchor, mustTime(t, v.now))
				if v.want == none {
					if ok {
						t.Errorf("Next = %s, want finished", got.Format(time.RFC3339Nano))
					}
					return
				}
				if !ok || !got.Equal(mustTime(t, v.want)) {
					t.Errorf("Next = %s, %v; want %s", got.Format(time.RFC3339Nano), ok, v.want)
				}
			case kCycle:
				c := val.(Cycle)
				n, unb := c.Executions()
				if n != v.execs || unb != v.unbounded {
					t.Errorf("Executions() = %d, %v; want %d, %v", n, unb, v.execs, v.unbounded)
				}
				got := c.NextRetryAt(mustTime(t, v.base), v.left)
				if !got.Equal(mustTime(t, v.want)) {
					t.Errorf("NextRetryAt(%s, %d) = %s, want %s", v.base, v.left, got.Format(time.RFC3339Nano), v.want)
				}
			}
		})
	}
}

func TestZeroCycle(t *testing.T) {
	var c Cycle
	if n, unb := c.Executions(); n != DefaultExecutions || unb {
		t.Errorf("zero Cycle Executions() = %d, %v", n, unb)
	}
	at := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	if got := c.NextRetryAt(at, 2); !got.Equal(at) {
		t.Errorf("zero Cycle NextRetryAt = %v, want %v", got, at)
	}
	if !c.IsZero() || c.String() != "" {
		t.Errorf("zero Cycle IsZero=%v String=%q", c.IsZero(), c.String())
	}
	if (Duration{}).String() != "PT0S" {
		t.Errorf("zero Duration String = %q", Duration{}.String())
	}
}

// TestCalendarDayVersusElapsed shows that P1D is a calendar day while PT24H
// is elapsed time, across a daylight-saving change.
func TestCalendarDayVersusElapsed(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	base := time.Date(2026, 3, 28, 12, 0, 0, 0, loc) // DST starts 2026-03-29
	day, _ := ParseDuration("P1D")
	h24, _ := ParseDuration("PT24H")
	if got, want := day.AddTo(base), time.Date(2026, 3, 29, 12, 0, 0, 0, loc); !got.Equal(want) {
		t.Errorf("P1D: %v, want %v", got, want)
	}
	if got, want := h24.AddTo(base), time.Date(2026, 3, 29, 13, 0, 0, 0, loc); !got.Equal(want) {
		t.Errorf("PT24H: %v, want %v", got, want)
	}
}

func TestAccessors(t *testing.T) {
	d, err := ParseDuration("P1Y2M3DT4H5M6.7S")
	if err != nil {
		t.Fatal(err)
	}
	got := []int64{d.Years(), d.Months(), d.Weeks(), d.Days(), d.Hours(), d.Minutes(), d.Seconds(), d.Nanoseconds()}
	if want := []int64{1, 2, 0, 3, 4, 5, 6, 700000000}; !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if d.IsZero() {
		t.Error("IsZero")
	}
	ri, err := ParseRepeatingInterval("R5/2026-01-31T10:00:00Z/P1M")
	if err != nil {
		t.Fatal(err)
	}
	if n, unb := ri.Repetitions(); n != 5 || unb || !ri.Repeating() {
		t.Errorf("Repetitions %d %v", n, unb)
	}
	if s, ok := ri.Start(); !ok || !s.Equal(time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("Start %v %v", s, ok)
	}
	if _, ok := ri.End(); ok {
		t.Error("End")
	}
	if p, ok := ri.Period(); !ok || p.String() != "P1M" {
		t.Errorf("Period %v %v", p, ok)
	}
	c, err := ParseCycle("PT10M,PT17M")
	if err != nil {
		t.Fatal(err)
	}
	if c.Repeating() || len(c.Intervals()) != 2 || c.Interval(3).String() != "PT10M" {
		t.Errorf("cycle accessors: %v %v %v", c.Repeating(), c.Intervals(), c.Interval(3))
	}
}

// TestDurationWithoutP: a duration written without its 'P' (a common slip,
// "R3/1S") is reported as a malformed duration with the right spelling, not as
// a malformed date-time.
func TestDurationWithoutP(t *testing.T) {
	for in, want := range map[string]string{
		"R3/1S":    `part 2 "1S" is not a duration: a duration starts with 'P', and hours, minutes and seconds follow a 'T', as in "PT1S"`,
		"R5/5M":    `as in "PT5M"`,
		"R2/1D":    `as in "P1D"`,
		"R2/1DT2H": `as in "P1DT2H"`,
		"10M":      `must start with 'P': a duration starts with 'P', and hours, minutes and seconds follow a 'T', as in "PT10M"`,
	} {
		_, err := ParseCycle(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCycle(%q) = %v, want an error containing %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "date-time") {
			t.Errorf("ParseCycle(%q) = %v: talks about a date-time", in, err)
		}
	}
	if _, err := ParseCycle("R2/2026-01-01T00:00:00Z/PT1H"); err == nil || strings.Contains(err.Error(), "is not a duration") {
		t.Errorf("a date-time is still read as one: %v", err)
	}
}
