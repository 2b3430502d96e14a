package retrypolicy

import (
	"reflect"
	"testing"
	"time"
)

// extraSeeds are fuzz seeds beyond the table inputs.
var extraSeeds = []string{
	"R5/PT5M", "R/PT1M", "R0/P1Y", "PT10M,PT17M,PT20M", "P1W", "P2147483647W",
	"PT0.000000001S", "R2147483647/PT0.000000001S", "R/P2147483647Y",
	"R/0000-01-01T00:00:00/PT0.000000001S", "R/P1M/9999-12-31T23:59:59.999999999-23:59",
	"R/0000-01-01T00:00:00+23:59/9999-12-31T23:59:59.999999999-23:59",
	"P2147483647Y2147483647M2147483647DT2147483647H2147483647M2147483647.999999999S",
	"R/P2147483647Y2147483647M2147483647DT2147483647H2147483647M2147483647.999999999S",
	"R/P2147483647Y2147483647M2147483647D/0000-01-01T00:00:00Z",
	"0000-02-29T00:00:00/P1Y", "R3/2024-02-29T12:00:00+14:00/P1Y",
	"P1Y,P1M,P1W,P1D,PT1H,PT1M,PT1S,PT0.5S", " PT1M ,\tPT2M\n", "R/P0D", "R/P0D/2026-01-01T00:00:00Z",
}

var fuzzTimes = []time.Time{
	time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC),
	time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	time.Date(2024, 2, 29, 23, 59, 59, 500000000, time.FixedZone("", -5*3600-30*60)),
}

func addSeeds(f *testing.F) {
	for _, v := range vectors {
		f.Add(v.in)
	}
	for _, s := range extraSeeds {
		f.Add(s)
	}
}

func FuzzParseDuration(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		str := d.String()
		d2, err := ParseDuration(str)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, str, err)
		}
		if !reflect.DeepEqual(d, d2) || d2.String() != str {
			t.Fatalf("%q → %q → %q: not equal", s, str, d2.String())
		}
		for _, tm := range fuzzTimes {
			a := d.AddTo(tm)
			b := d.SubtractFrom(tm)
			if a.Before(tm) || b.After(tm) {
				t.Fatalf("%q: AddTo(%v) = %v, SubtractFrom = %v", s, tm, a, b)
			}
		}
	})
}

func FuzzParseRepeatingInterval(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		ri, err := ParseRepeatingInterval(s)
		if err != nil {
			return
		}
		str := ri.String()
		ri2, err := ParseRepeatingInterval(str)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, str, err)
		}
		if !reflect.DeepEqual(ri, ri2) || ri2.String() != str {
			t.Fatalf("%q → %q → %q: not equal", s, str, ri2.String())
		}
		anchor := fuzzTimes[0]
		for _, now := range fuzzTimes {
			next, ok := ri.Next(anchor, now)
			if ok && !next.After(now) {
				t.Fatalf("%q: Next(%v) = %v, not after now", s, now, next)
			}
			if want, wantOK, checked := bruteNext(ri, anchor, now); checked && (ok != wantOK || ok && !next.Equal(want)) {
				t.Fatalf("%q: Next(%v) = %v, %v; brute force %v, %v", s, now, next, ok, want, wantOK)
			}
		}
	})
}

// bruteNext enumerates the candidates of a bounded interval with a small
// count. checked is false when the interval is not of that kind.
func bruteNext(ri RepeatingInterval, anchor, now time.Time) (next time.Time, ok, checked bool) {
	if !ri.repeat || ri.unbounded || ri.count > 200 {
		return time.Time{}, false, false
	}
	p := ri.step()
	for k := int64(0); k <= ri.count; k++ {
		var c time.Time
		var inRange bool
		switch {
		case ri.hasEnd && !ri.hasStart:
			c, inRange = p.shift(ri.end.time(), k, -1)
		case ri.hasStart:
			c, inRange = p.shift(ri.start.time(), k, 1)
		default:
			if k == 0 {
				continue
			}
			c, inRange = p.shift(anchor, k, 1)
		}
		if inRange && c.After(now) && (!ok || c.Before(next)) {
			next, ok = c, true
		}
	}
	return next, ok, true
}

func FuzzParseCycle(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCycle(s)
		if err != nil {
			return
		}
		str := c.String()
		c2, err := ParseCycle(str)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, str, err)
		}
		if !reflect.DeepEqual(c, c2) || c2.String() != str {
			t.Fatalf("%q → %q → %q: not equal", s, str, c2.String())
		}
		n, unbounded := c.Executions()
		if unbounded != (c.repeat && c.unbounded) || !unbounded && n < 1 {
			t.Fatalf("%q: Executions() = %d, %v", s, n, unbounded)
		}
		for _, left := range []int{-1 << 62, -1, 0, 1, 2, 3, n, n + 1, 1 << 62} {
			for _, at := range fuzzTimes {
				if got := c.NextRetryAt(at, left); got.Before(at) {
					t.Fatalf("%q: NextRetryAt(%v, %d) = %v, before the failure", s, at, left, got)
				}
			}
		}
	})
}
