package timer

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustParse(t *testing.T, typ Type, value string) Definition {
	t.Helper()
	d, err := Parse(typ, value)
	require.NoError(t, err)
	return d
}

// fireSequence plays a timer's lifecycle with a fixed clock: each occurrence
// fires at its due date plus late, and the next is computed from there.
func fireSequence(t *testing.T, d Definition, created time.Time, late time.Duration, offset time.Duration, max int) []time.Time {
	t.Helper()
	var out []time.Time
	o, ok := d.First(created)
	if ok && offset != 0 {
		o.At = o.At.Add(offset) // the first occurrence moved with cascade
	}
	for ok && len(out) < max {
		out = append(out, o.At)
		o, ok = d.Next(created, o.At.Add(late), offset)
	}
	return out
}

func TestCycleVectors(t *testing.T) {
	m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

	// R2/PT5M fires at t0+5m and t0+10m, then stops.
	require.Equal(t, []time.Time{m(5), m(10)}, fireSequence(t, mustParse(t, TypeCycle, "R2/PT5M"), t0, 0, 0, 10))

	// R3/PT10H: +10h, +20h, +30h.
	require.Equal(t, []time.Time{t0.Add(10 * time.Hour), t0.Add(20 * time.Hour), t0.Add(30 * time.Hour)},
		fireSequence(t, mustParse(t, TypeCycle, "R3/PT10H"), t0, 0, 0, 10))

	// R3/<future start>/PT1H first fires at the start (start + k·P, k = 0..3).
	start := t0.Add(48 * time.Hour)
	require.Equal(t, []time.Time{start, start.Add(time.Hour), start.Add(2 * time.Hour), start.Add(3 * time.Hour)},
		fireSequence(t, mustParse(t, TypeCycle, "R3/2026-01-03T00:00:00Z/PT1H"), t0, 0, 0, 10))

	// A late firing skips the missed slots: R/PT1M fired 2m30s late.
	d := mustParse(t, TypeCycle, "R/PT1M")
	next, ok := d.Next(t0, m(1).Add(150*time.Second), 0)
	require.True(t, ok)
	require.Equal(t, m(4), next.At, "slots at +2m and +3m are skipped")
	require.Equal(t, int64(-1), next.Left)

	// R2/PT30M whose first occurrence was moved +15m with cascade: t0+45m,
	// then 30 minutes later, then it stops.
	require.Equal(t, []time.Time{m(45), m(75)}, fireSequence(t, mustParse(t, TypeCycle, "R2/PT30M"), t0, 0, 15*time.Minute, 10))

	// R/<start>/P1D/<end>: daily until the end, inclusive.
	require.Equal(t, []time.Time{t0.AddDate(0, 0, 1), t0.AddDate(0, 0, 2), t0.AddDate(0, 0, 3)},
		fireSequence(t, mustParse(t, TypeCycle, "R/2026-01-02T00:00:00Z/P1D/2026-01-04T00:00:00Z"), t0, 0, 0, 10))

	// Rn/P/<end>: end − k·P.
	require.Equal(t, []time.Time{m(60), m(90), m(120)},
		fireSequence(t, mustParse(t, TypeCycle, "R2/PT30M/2026-01-01T02:00:00Z"), t0.Add(50*time.Minute), 0, 0, 10))

	// Repetitions left count down.
	d = mustParse(t, TypeCycle, "R3/PT1H")
	o, _ := d.First(t0)
	require.Equal(t, int64(2), o.Left)
	o, _ = d.Next(t0, o.At, 0)
	require.Equal(t, int64(1), o.Left)

	// Date and duration timers fire once.
	require.Equal(t, []time.Time{m(5)}, fireSequence(t, mustParse(t, TypeDuration, "PT5M"), t0, 0, 0, 10))
	require.Equal(t, []time.Time{time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)},
		fireSequence(t, mustParse(t, TypeDate, "2026-03-01T10:00:00+01:00"), t0, 0, 0, 10))
	// Calendar months: Jan 31 + P1M = Feb 28.
	require.Equal(t, []time.Time{time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)},
		fireSequence(t, mustParse(t, TypeDuration, "P1M"), time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), 0, 0, 10))
}

func TestBeyondYear9999EndsTheCycle(t *testing.T) {
	d := mustParse(t, TypeCycle, "R/P1000Y")
	seq := fireSequence(t, d, t0, 0, 0, 100)
	require.Len(t, seq, 7, "3026 ... 9026; 10026 is beyond 9999")
	require.Equal(t, 9026, seq[len(seq)-1].Year())

	_, ok := mustParse(t, TypeDuration, "P8000Y").First(t0)
	require.False(t, ok)
	_, ok = mustParse(t, TypeCycle, "R/P2147483647Y").First(t0)
	require.False(t, ok)
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		typ   Type
		value string
		want  string
	}{
		{TypeCycle, "R0/PT5M", "zero repetitions"},
		{TypeCycle, "R3/PT5.5M", "fraction allowed only on seconds"},
		{TypeCycle, "R3", "missing '/'"},
		{TypeCycle, "R/2026-01-01T00:00:00Z/P1D/2025-01-01T00:00:00Z", "before start"},
		{TypeCycle, "R/PT1H/P1D/2025-01-01T00:00:00Z", "two durations"},
		{TypeCycle, "0 0 12 * *", "5 fields"},
		{TypeCycle, "0 0 12 * * ? 2026", "7 fields"},
		{TypeCycle, "0 0 25 * * ?", "hour"},
		{TypeCycle, "0 0 0 * * 8", `"8" is not a day of week`},
		{TypeCycle, "0 0 0 * * L", "day of week"},
		{TypeCycle, "@every 5m", "unknown macro"},
		{TypeDate, "2026-13-01T00:00:00Z", "month 13 out of range"},
		{TypeDate, "01/02/2026", "expected YYYY-MM-DDThh:mm:ss"},
		{TypeDate, "2026-01-01", "expected YYYY-MM-DDThh:mm:ss"},
		{TypeDate, "2026-01-01t00:00:00", "lower-case 't'"},
		{TypeDuration, "pt5m", "lower-case"},
		{TypeDuration, "-PT5M", "sign"},
		{TypeDuration, "P", "no fields"},
		{"weekly", "P1W", "unknown timer type"},
	} {
		_, err := Parse(tc.typ, tc.value)
		require.Error(t, err, "%s %q", tc.typ, tc.value)
		require.ErrorIs(t, err, ErrInvalid)
		var de *DefinitionError
		require.True(t, errors.As(err, &de))
		require.Contains(t, err.Error(), `"`+tc.value+`"`, "the error names the value")
		require.Contains(t, err.Error(), tc.want)
	}
}
