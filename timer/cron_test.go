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

// TestCronTimeZone: CRON_TZ= reads the fields in an IANA zone; across
// daylight saving changes times are wall-clock times, as in Spring's
// CronExpression with a ZonedDateTime (the first three vectors are Spring's
// own, CronExpressionTests.daylightSaving): a time the clock skips does not
// happen that day, a time it passes twice happens once, the first time.
func TestCronTimeZone(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	seq := func(expr string, from string, n int) []string {
		c, err := ParseCron(expr)
		require.NoError(t, err, expr)
		var out []string
		for next := at(from); len(out) < n; {
			var ok bool
			next, ok = c.Next(next)
			require.True(t, ok, "%s after %v", expr, next)
			require.Equal(t, time.UTC, next.Location())
			out = append(out, next.Format(time.RFC3339))
		}
		return out
	}
	for _, tc := range []struct {
		expr, from string
		want       []string
	}{
		// 9:00 Amsterdam time on both sides of the spring and autumn changes.
		{"CRON_TZ=Europe/Amsterdam 0 0 9 * * *", "2021-03-27T09:00:00+01:00", []string{"2021-03-28T07:00:00Z"}},
		{"CRON_TZ=Europe/Amsterdam 0 0 9 * * *", "2021-10-30T09:00:00+02:00", []string{"2021-10-31T08:00:00Z"}},
		// 2:10 does not exist on 31 March 2013 in Amsterdam: the next is 1 April.
		{"CRON_TZ=Europe/Amsterdam 0 10 2 * * *", "2013-03-31T01:09:00+01:00", []string{"2013-04-01T00:10:00Z"}},
		// Every 30 minutes through the spring gap: 1:30 CET, then 3:00 CEST.
		{"CRON_TZ=Europe/Berlin 0 0/30 * * * *", "2026-03-29T01:00:00+01:00", []string{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},
		// 2:30 passes twice on 25 October 2026 in Berlin: once, at CEST.
		{"CRON_TZ=Europe/Berlin 0 30 2 * * *", "2026-10-25T00:00:00+02:00", []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Hourly at :30 through the autumn change: 2:30 CEST, not 2:30 CET, 3:30 CET.
		{"CRON_TZ=Europe/Berlin 0 30 * * * *", "2026-10-25T01:00:00+02:00", []string{"2026-10-24T23:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:30:00Z"}},
		// Weekdays 9:00 New York: EST, then EDT after 8 March 2026.
		{"CRON_TZ=America/New_York 0 0 9 * * MON-FRI", "2026-03-06T00:00:00Z", []string{"2026-03-06T14:00:00Z", "2026-03-09T13:00:00Z"}},
		// The day fields are the zone's days: the 1st in Auckland is the
		// 31st (or 30th) in UTC; Friday the 13th in Auckland starts on the 12th in UTC.
		{"TZ=Pacific/Auckland 0 0 0 1 * *", "2026-01-01T00:00:00Z", []string{"2026-01-31T11:00:00Z", "2026-02-28T11:00:00Z"}},
		{"CRON_TZ=Pacific/Auckland 0 0 0 13 * FRI", "2026-01-01T00:00:00Z", []string{"2026-02-12T11:00:00Z", "2026-03-12T11:00:00Z"}},
		{"CRON_TZ=UTC @daily", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z"}},
	} {
		require.Equal(t, tc.want, seq(tc.expr, tc.from, len(tc.want)), tc.expr)
	}

	for expr, reason := range map[string]string{
		"CRON_TZ=Mars/Olympus 0 0 9 * * *": `time zone "Mars/Olympus" is not an IANA time zone name`,
		"CRON_TZ= 0 0 9 * * *":             `time zone "" is not an IANA time zone name`,
		"CRON_TZ=Local 0 0 9 * * *":        `time zone "Local" is not an IANA time zone name`,
		"CRON_TZ=Europe/Paris":             "a time zone prefix needs the expression after it",
		"CRON_TZ=Europe/Paris 0 0 9 * *":   "5 fields",
	} {
		_, err := ParseCron(expr)
		var ce *CronError
		require.ErrorAs(t, err, &ce, expr)
		require.Equal(t, expr, ce.Expr)
		require.Contains(t, err.Error(), reason, expr)
	}

	// A cycle keeps its zone: it is part of the stored definition.
	def, err := Parse(TypeCycle, "CRON_TZ=Europe/Paris 0 0 9 * * *")
	require.NoError(t, err)
	require.True(t, def.IsCron())
	require.Equal(t, "CRON_TZ=Europe/Paris 0 0 9 * * *", def.String())
	o, ok := def.Next(at("2026-07-01T00:00:00Z"), at("2026-07-01T00:00:00Z"), 0)
	require.True(t, ok)
	require.Equal(t, at("2026-07-01T07:00:00Z"), o.At)
}
