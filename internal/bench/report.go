package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteJSON writes r as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as tables for people.
func (r *Report) WriteTable(w io.Writer) error {
	m, s := r.Machine, r.Settings
	fmt.Fprintf(w, "machine: %d CPUs (GOMAXPROCS %d), %s, River %s, %s; load average at start %s\n",
		m.CPUs, m.GOMAXPROCS, m.Postgres, m.River, m.Go, orUnknown(m.LoadAverage))

	if len(r.Throughput) > 0 {
		jobs := "each mode's default number of"
		if s.Jobs > 0 {
			jobs = strconv.Itoa(s.Jobs)
		}
		fmt.Fprintf(w, "throughput: %s queued jobs, %d workers, %d rounds, work %gms, fetch cooldown %gms, poll interval %gms\n\n",
			jobs, s.Workers, s.Rounds, s.WorkMs, s.FetchCooldownMs, s.FetchPollIntervalMs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "mode\tside\tjobs/s median\tmin-max\tIQR\tfetch p50\tfetch p99\tWAL/job\tfetch plan/job\tfetch exec/job\tall stmts/job\tstmt WAL/job\tjobs/s vs stock\tpaired\tp50 vs stock\tp99 vs stock\ttarget\t")
		for _, res := range r.Throughput {
			writeSide(tw, res.Mode, "stock", res.Stock)
			writeSide(tw, res.Mode, "riverbpmn", res.RiverBPMN)
			fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t\t\t\t\t%.1f%%\t%.1f%%\tx%.2f\tx%.2f\t%s\t\n",
				100*res.Ratio.JobsPerSecond, 100*res.Ratio.JobsPerSecondPaired,
				res.Ratio.FetchP50, res.Ratio.FetchP99, targetText(res.Target, res.MeetsTarget, ">= %.0f%%", 100*res.Target))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, res := range r.Throughput {
			fmt.Fprintf(w, "  %s: %s\n", res.Mode, res.Summary)
		}
		for _, res := range r.Throughput {
			for _, side := range []struct {
				name string
				res  SideResult
			}{{"stock", res.Stock}, {"riverbpmn", res.RiverBPMN}} {
				if d := side.res.SmallTenantsDone; d != nil {
					fmt.Fprintf(w, "  %s %s: small tenants' jobs all completed after %.2fs (min-max %.2f-%.2f), fetch %.0f (min-max %.0f-%.0f)\n",
						res.Mode, side.name, d.Seconds.Median, d.Seconds.Min, d.Seconds.Max, d.Fetches.Median, d.Fetches.Min, d.Fetches.Max)
				}
			}
		}
		for _, res := range r.Throughput {
			if res.Versus != "" {
				fmt.Fprintf(w, "  %s vs %s (riverbpmn jobs/s, medians): %.1f%% %s\n", res.Mode, res.Versus, 100*res.VersusRatio,
					targetText(res.VersusTarget, res.MeetsVersusTarget, "(target >= %.0f%%)", 100*res.VersusTarget))
			}
		}
	}

	if c := r.InsertCost; c != nil {
		fmt.Fprintf(w, "insert cost: %d exclusive jobs per INSERT ... SELECT, %d samples each, indexes %v\n", c.Jobs, len(c.With.Samples), c.Indexes)
		fmt.Fprintf(w, "  with the indexes:    median %.0fms (min-max %.0f-%.0f)\n", c.With.Median, c.With.Min, c.With.Max)
		fmt.Fprintf(w, "  without the indexes: median %.0fms (min-max %.0f-%.0f)\n", c.Without.Median, c.Without.Min, c.Without.Max)
		fmt.Fprintf(w, "  ratio: x%.2f\n", c.Ratio)
	}

	if len(r.FetchLatency) > 0 {
		fmt.Fprintf(w, "fetch latency: single fetches of %d jobs, %d per variant and size, jobs put back after each\n\n", s.FetchSize, s.Samples)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "available\tload\tvariant\tp50\tp99\tmax\tp50 vs stock\tp99 vs stock\ttarget\t")
		for _, size := range r.FetchLatency {
			for _, v := range size.Variants {
				fmt.Fprintf(tw, "%d\t%.1fs\t%s\t%.2fms\t%.2fms\t%.2fms\tx%.2f\tx%.2f\t%s\t\n",
					size.Available, size.LoadSeconds, v.Variant, v.Latency.P50Ms, v.Latency.P99Ms, v.Latency.MaxMs,
					v.RatioP50, v.RatioP99, targetText(1, v.MeetsTarget, "p99 <= x%g", FetchTargetP99Ratio))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, v := range r.FetchLatency[0].Variants {
			fmt.Fprintf(w, "  %s: %s\n", v.Variant, v.Summary)
		}
	}
	return nil
}

func writeSide(w io.Writer, mode, side string, res SideResult) {
	j := res.JobsPerSecond
	bytesOf := func(s *Summary) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f B", s.Median)
	}
	micros := func(s *Summary) string {
		if s == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f us", s.Median)
	}
	fmt.Fprintf(w, "%s\t%s\t%.0f\t%.0f-%.0f\t%.0f-%.0f\t%.2fms\t%.2fms\t%.0f B\t%s\t%s\t%s\t%s\t\t\t\t\t\t\n",
		mode, side, j.Median, j.Min, j.Max, j.Q1, j.Q3, res.FetchLatency.P50Ms, res.FetchLatency.P99Ms, res.WALBytesPerJob.Median,
		micros(res.FetchPlanUs), micros(res.FetchExecUs), micros(res.ServerUs), bytesOf(res.StatementWAL))
}

// targetText describes a target and whether it is met ("" without one).
func targetText(target float64, meets *bool, format string, args ...any) string {
	if target == 0 || meets == nil {
		return ""
	}
	verdict := "met"
	if !*meets {
		verdict = "MISSED"
	}
	return fmt.Sprintf(format, args...) + ": " + verdict
}
