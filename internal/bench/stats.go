package bench

import (
	"slices"
	"time"
)

// Summary describes a handful of samples (one per round): the median and the
// spread, both as min-max and as the interquartile range.
type Summary struct {
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Q1      float64   `json:"q1"`
	Q3      float64   `json:"q3"`
	Samples []float64 `json:"samples"`
}

// summarize summarizes samples (in the order measured, kept in Samples).
func summarize(samples []float64) Summary {
	s := Summary{Samples: slices.Clone(samples)}
	if s.Samples == nil {
		s.Samples = []float64{}
	}
	if len(samples) == 0 {
		return s
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Median = quantile(sorted, 0.5)
	s.Q1 = quantile(sorted, 0.25)
	s.Q3 = quantile(sorted, 0.75)
	return s
}

// quantile returns the q-quantile of sorted by linear interpolation between
// the closest ranks (the default of R and NumPy); 0 for no samples.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := q * float64(len(sorted)-1)
	lo := int(pos)
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

// Latency is a distribution of fetch durations, in milliseconds.
type Latency struct {
	// Count is the number of fetches measured.
	Count int     `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// latencyOf computes the latency percentiles of durations.
func latencyOf(durations []time.Duration) Latency {
	ms := make([]float64, len(durations))
	for i, d := range durations {
		ms[i] = float64(d) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	l := Latency{Count: len(ms)}
	if len(ms) > 0 {
		l.P50Ms = quantile(ms, 0.50)
		l.P99Ms = quantile(ms, 0.99)
		l.MaxMs = ms[len(ms)-1]
	}
	return l
}

// ratio returns a/b, or 0 when b is 0 (nothing measured), which JSON can
// carry where an infinity or NaN could not.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
