package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// DefaultCompareTolerance is how far, in percentage points, a mode's
// riverbpmn/stock ratio may fall below the saved run's before Compare calls
// it a regression. Ratios of two runs of the same build on the 2-core
// reference machine differ by up to about 5 points.
const DefaultCompareTolerance = 5.0

// Comparison sets a run's throughput ratios against a saved run's, mode by
// mode. Ratios, not jobs/s: each is measured against stock River in its own
// run, so two runs on differently loaded machines stay comparable.
type Comparison struct {
	// Saved is the file the saved run was read from.
	Saved string `json:"saved"`
	// TolerancePoints is the drop, in percentage points, still accepted.
	TolerancePoints float64 `json:"tolerance_points"`
	// Modes has one row per mode in both runs, in the current run's order.
	Modes []ModeComparison `json:"modes"`
	// Missing names the saved run's modes that the current run lacks.
	Missing []string `json:"missing,omitempty"`
}

// ModeComparison is one mode's ratio in the saved and the current run.
type ModeComparison struct {
	Mode string `json:"mode"`
	// SavedRatio and Ratio are riverbpmn's median jobs/s over stock's.
	SavedRatio float64 `json:"saved_ratio"`
	Ratio      float64 `json:"ratio"`
	// ChangePoints is Ratio - SavedRatio in percentage points.
	ChangePoints float64 `json:"change_points"`
	// SavedWALBytesPerJob and WALBytesPerJob are riverbpmn's median WAL per
	// job (0 when the saved run predates the measurement).
	SavedWALBytesPerJob float64 `json:"saved_wal_bytes_per_job,omitempty"`
	WALBytesPerJob      float64 `json:"wal_bytes_per_job,omitempty"`
	// Regressed is true when the ratio fell by more than the tolerance.
	Regressed bool `json:"regressed"`
}

// ReadReport reads a report written by Report.WriteJSON (`riverbpmn bench
// --json`).
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the saved run: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("saved run %s: not a bench --json report: %w", path, err)
	}
	if len(r.Throughput) == 0 {
		return nil, fmt.Errorf("saved run %s: has no throughput results to compare with", path)
	}
	return &r, nil
}

// Compare sets current's throughput ratios against saved's.
func Compare(savedPath string, saved, current *Report, tolerancePoints float64) *Comparison {
	c := &Comparison{Saved: savedPath, TolerancePoints: tolerancePoints}
	savedByMode := make(map[string]ModeResult, len(saved.Throughput))
	for _, res := range saved.Throughput {
		savedByMode[res.Mode] = res
	}
	seen := make(map[string]bool, len(current.Throughput))
	for _, res := range current.Throughput {
		seen[res.Mode] = true
		old, ok := savedByMode[res.Mode]
		if !ok {
			continue
		}
		change := 100 * (res.Ratio.JobsPerSecond - old.Ratio.JobsPerSecond)
		c.Modes = append(c.Modes, ModeComparison{
			Mode:                res.Mode,
			SavedRatio:          old.Ratio.JobsPerSecond,
			Ratio:               res.Ratio.JobsPerSecond,
			ChangePoints:        change,
			SavedWALBytesPerJob: old.RiverBPMN.WALBytesPerJob.Median,
			WALBytesPerJob:      res.RiverBPMN.WALBytesPerJob.Median,
			Regressed:           change < -tolerancePoints,
		})
	}
	for _, res := range saved.Throughput {
		if !seen[res.Mode] {
			c.Missing = append(c.Missing, res.Mode)
		}
	}
	return c
}

// Regressed reports whether any mode's ratio fell by more than the
// tolerance.
func (c *Comparison) Regressed() bool {
	for _, m := range c.Modes {
		if m.Regressed {
			return true
		}
	}
	return false
}

// WriteTable writes the comparison for people.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "compared with %s (ratios to stock River; tolerance %.1f points)\n\n", c.Saved, c.TolerancePoints)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tsaved\tnow\tchange\tWAL/job saved\tWAL/job now\t\t")
	for _, m := range c.Modes {
		verdict := "ok"
		if m.Regressed {
			verdict = "REGRESSED"
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%+.1f\t%s\t%s\t%s\t\n", m.Mode, 100*m.SavedRatio, 100*m.Ratio, m.ChangePoints,
			bytesOrDash(m.SavedWALBytesPerJob), bytesOrDash(m.WALBytesPerJob), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Missing) > 0 {
		fmt.Fprintf(w, "  not in this run: %v\n", c.Missing)
	}
	return nil
}

func bytesOrDash(b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f B", b)
}
