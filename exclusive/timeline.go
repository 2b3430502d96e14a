package exclusive

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Span is one run of one job attempt: from when its work began to when it
// ended, with the key it was exclusive on ("" for none).
type Span struct {
	Key     string
	JobID   int64
	Attempt int
	Start   time.Time
	End     time.Time
}

// Overlap is a pair of spans of one key that ran at the same time.
type Overlap struct {
	First, Second Span
}

// String describes the overlap for a test failure.
func (o Overlap) String() string {
	return fmt.Sprintf("key %q: job %d attempt %d [%s] overlaps job %d attempt %d [%s]",
		o.First.Key, o.First.JobID, o.First.Attempt, o.First.End.Sub(o.First.Start),
		o.Second.JobID, o.Second.Attempt, o.Second.End.Sub(o.Second.Start))
}

// Timeline records spans from many goroutines. Times come from time.Now and
// so carry Go's monotonic clock: spans recorded by one process compare
// exactly, whatever the wall clock does.
type Timeline struct {
	mu    sync.Mutex
	spans []Span
}

// Begin records the start of a span and returns the function that records
// its end; call it exactly once, when the work ends.
func (t *Timeline) Begin(key string, jobID int64, attempt int) (end func()) {
	start := time.Now()
	return func() {
		span := Span{Key: key, JobID: jobID, Attempt: attempt, Start: start, End: time.Now()}
		t.mu.Lock()
		t.spans = append(t.spans, span)
		t.mu.Unlock()
	}
}

// Spans returns a copy of the spans recorded so far.
func (t *Timeline) Spans() []Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.spans)
}

// Overlaps returns every pair of spans with the same non-empty key whose
// runs intersect (one started before the other ended). Spans that merely
// touch (one ends exactly when the other starts) do not overlap.
func Overlaps(spans []Span) []Overlap {
	byKey := make(map[string][]Span)
	for _, s := range spans {
		if s.Key != "" {
			byKey[s.Key] = append(byKey[s.Key], s)
		}
	}
	var overlaps []Overlap
	for _, keySpans := range byKey {
		slices.SortFunc(keySpans, func(a, b Span) int { return a.Start.Compare(b.Start) })
		for i := range keySpans {
			for j := i + 1; j < len(keySpans) && keySpans[j].Start.Before(keySpans[i].End); j++ {
				overlaps = append(overlaps, Overlap{First: keySpans[i], Second: keySpans[j]})
			}
		}
	}
	slices.SortFunc(overlaps, func(a, b Overlap) int { return a.Second.Start.Compare(b.Second.Start) })
	return overlaps
}
