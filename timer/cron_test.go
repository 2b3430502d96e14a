package timer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func cronSeq(t *testing.T, expr string, from time.Time, n int) []string {
	t.Helper()
	c, err := ParseCron(expr)
	require.NoError(t, err, expr)
	var out []string
	for i := 0; i < n; i++ {
		next, ok := c.Next(from)
		if !ok {
			break
		}
		out = append(out, next.Format("2006-01-02T15:04:05 Mon"))
		from = next
	}
	return out
}

// Vectors in Spring's dialect (the one Camunda 7.24 reads). 2026-01-01 is a
// Thursday.
func TestCronSpringVectors(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{"0 0 12 * * ?", []string{"2026-01-01T12:00:00 Thu", "2026-01-02T12:00:00 Fri"}},
		{"*/20 * * * * *", []string{"2026-01-01T00:00:20 Thu", "2026-01-01T00:00:40 Thu", "2026-01-01T00:01:00 Thu"}},
		{"0 0/30 9-10 * * MON-FRI", []string{"2026-01-01T09:00:00 Thu", "2026-01-01T09:30:00 Thu", "2026-01-01T10:00:00 Thu", "2026-01-01T10:30:00 Thu", "2026-01-02T09:00:00 Fri"}},
		// Day of week: 0 and 7 are Sunday, 5 is Friday (Quartz would read 6).
		{"0 0 0 * * 0", []string{"2026-01-04T00:00:00 Sun", "2026-01-11T00:00:00 Sun"}},
		{"0 0 0 * * 7", []string{"2026-01-04T00:00:00 Sun", "2026-01-11T00:00:00 Sun"}},
		{"0 0 0 ? * SUN", []string{"2026-01-04T00:00:00 Sun"}},
		{"0 0 0 * * 5", []string{"2026-01-02T00:00:00 Fri", "2026-01-09T00:00:00 Fri"}},
		{"0 0 0 * * 5-7", []string{"2026-01-02T00:00:00 Fri", "2026-01-03T00:00:00 Sat", "2026-01-04T00:00:00 Sun", "2026-01-09T00:00:00 Fri"}},
		{"0 0 0 * * */3", []string{"2026-01-03T00:00:00 Sat", "2026-01-04T00:00:00 Sun", "2026-01-07T00:00:00 Wed", "2026-01-10T00:00:00 Sat"}},
		// L, L-n, W, LW in the day of month.
		{"0 0 0 L * ?", []string{"2026-01-31T00:00:00 Sat", "2026-02-28T00:00:00 Sat"}},
		{"0 0 0 L-3 * ?", []string{"2026-01-28T00:00:00 Wed", "2026-02-25T00:00:00 Wed"}},
		{"0 0 0 15W * ?", []string{"2026-01-15T00:00:00 Thu", "2026-02-16T00:00:00 Mon"}},
		{"0 0 0 LW * ?", []string{"2026-01-30T00:00:00 Fri", "2026-02-27T00:00:00 Fri"}},
		// nL and n#k in the day of week.
		{"0 15 10 ? * 5L", []string{"2026-01-30T10:15:00 Fri", "2026-02-27T10:15:00 Fri"}},
		{"0 0 9 ? * 1#2", []string{"2026-01-12T09:00:00 Mon", "2026-02-09T09:00:00 Mon"}},
		{"0 0 9 ? * 0#1", []string{"2026-01-04T09:00:00 Sun", "2026-02-01T09:00:00 Sun"}},
		// Both day fields restrict: both must match (Friday the 13th).
		{"0 0 0 13 * FRI", []string{"2026-02-13T00:00:00 Fri", "2026-03-13T00:00:00 Fri", "2026-11-13T00:00:00 Fri"}},
		// Macros.
		{"@daily", []string{"2026-01-02T00:00:00 Fri"}},
		{"@midnight", []string{"2026-01-02T00:00:00 Fri"}},
		{"@hourly", []string{"2026-01-01T01:00:00 Thu"}},
		{"@weekly", []string{"2026-01-04T00:00:00 Sun"}},
		{"@monthly", []string{"2026-02-01T00:00:00 Sun"}},
		{"@yearly", []string{"2027-01-01T00:00:00 Fri"}},
		{"@annually", []string{"2027-01-01T00:00:00 Fri"}},
		// Names in any case.
		{"0 0 0 1 jan ?", []string{"2027-01-01T00:00:00 Fri"}},
	} {
		require.Equal(t, tc.want, cronSeq(t, tc.expr, from, len(tc.want)), tc.expr)
	}
}

func TestCronNeverFires(t *testing.T) {
	c, err := ParseCron("0 0 0 30 2 ?")
	require.NoError(t, err)
	_, ok := c.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.False(t, ok, "30 February never comes")

	d := mustParse(t, TypeCycle, "0 0 0 31 2 ?")
	_, ok = d.First(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.False(t, ok)
}
