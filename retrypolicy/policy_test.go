package retrypolicy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// fallbackAt is a retry policy that answers a fixed time, to see when the
// policy falls back.
type fallbackAt time.Time

func (f fallbackAt) NextRetry(*rivertype.JobRow) time.Time { return time.Time(f) }

// TestNextRetry: the engine's retry policy (workflow.RetryPolicy, which
// answers with NextRetry from the job context's cycle) waits the interval
// Camunda's interval-index rule picks, and leaves jobs without a readable
// cycle to its fallback, River's default when none is given.
func TestNextRetry(t *testing.T) {
	t.Parallel()

	bpmn := func(cycle string) []byte {
		return []byte(fmt.Sprintf(`{"bpmn": {"process_definition_key": "p", "retry_cycle": %q}}`, cycle))
	}
	fallback := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	policy := &workflow.RetryPolicy{Fallback: fallbackAt(fallback)}

	// wait runs the policy for a job that failed its attempt-th execution
	// of maxAttempts.
	wait := func(metadata []byte, attempt, maxAttempts int) time.Duration {
		before := time.Now()
		next := policy.NextRetry(&rivertype.JobRow{Attempt: attempt, MaxAttempts: maxAttempts, Metadata: metadata})
		if next.Equal(fallback) {
			return -1
		}
		return next.Sub(before).Round(100 * time.Millisecond)
	}

	t.Run("IntervalIndexRule", func(t *testing.T) {
		t.Parallel()
		list := bpmn("PT10M,PT17M,PT20M") // N = 3, 4 executions
		cases := []struct {
			attempt, maxAttempts int
			want                 time.Duration
		}{
			{1, 4, 10 * time.Minute}, // 4 left before the failure: index 3-(4-1) = 0
			{2, 4, 17 * time.Minute}, // 3 left: index 1
			{3, 4, 20 * time.Minute}, // 2 left: index 2
			// Retries raised mid-way (SetRetries 6 after the first
			// failure, max_attempts 1+6): the FIRST interval until the count
			// is back in the list's range.
			{2, 7, 10 * time.Minute}, // 6 left: index -2, clamped to 0
			{4, 7, 10 * time.Minute}, // 4 left: index 0
			{5, 7, 17 * time.Minute}, // 3 left: index 1
			{6, 7, 20 * time.Minute}, // 2 left: index 2
			{7, 7, 20 * time.Minute}, // 1 left (River discards; clamped to N-1)
		}
		for _, tc := range cases {
			require.Equal(t, tc.want, wait(list, tc.attempt, tc.maxAttempts), "attempt %d of %d", tc.attempt, tc.maxAttempts)
		}
	})

	t.Run("Forms", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, time.Second, wait(bpmn("R3/PT1S"), 1, 3))
		require.Equal(t, time.Second, wait(bpmn("R3/PT1S"), 2, 3))
		require.Equal(t, 5*time.Minute, wait(bpmn("PT5M"), 1, 2))
		require.Equal(t, 90*time.Minute, wait(bpmn("R/PT90M"), 1000, retrypolicy.MaxAttemptsUnbounded))
		require.Equal(t, 1500*time.Millisecond, wait(bpmn("R2/PT1.5S"), 1, 2))
		require.Equal(t, 24*time.Hour, wait(bpmn("R2/P1D"), 1, 2))
		require.Equal(t, time.Duration(0), wait([]byte(`{"bpmn": {"process_definition_key": "p"}}`), 1, 3), "no cycle: at once")
		require.Equal(t, 2*time.Second, wait([]byte(`{"bpmn_retry_cycle": "R2/PT2S"}`), 1, 2), "plain job under the default cycle")
	})

	t.Run("FallsBack", func(t *testing.T) {
		t.Parallel()
		for name, metadata := range map[string]string{
			"PlainJob":             `{}`,
			"EmptyMetadata":        ``,
			"OtherMetadata":        `{"tenant": "acme"}`,
			"UnparseableCycle":     `{"bpmn": {"process_definition_key": "p", "retry_cycle": "every now and then"}}`,
			"CycleNotAString":      `{"bpmn": {"process_definition_key": "p", "retry_cycle": 42}}`,
			"ContextNotAnObject":   `{"bpmn": "nope"}`,
			"PlainCycleBad":        `{"bpmn_retry_cycle": "R2"}`,
			"PlainCycleNotAString": `{"bpmn_retry_cycle": ["R2/PT1S"]}`,
			"MetadataNotAnObject":  `[1, 2]`,
		} {
			require.Equal(t, time.Duration(-1), wait([]byte(metadata), 1, 3), name)
		}
	})

	t.Run("BadDataElsewhereInTheContextIsIgnored", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, time.Second, wait([]byte(`{"bpmn": {"process_definition_key": "", "activity_id": 7, "retry_cycle": "R2/PT1S"}}`), 1, 2))
	})

	t.Run("DefaultFallbackIsRivers", func(t *testing.T) {
		t.Parallel()
		job := &rivertype.JobRow{Attempt: 1, MaxAttempts: 25, Metadata: []byte(`{}`)}
		next := (&workflow.RetryPolicy{}).NextRetry(job)
		// River's default: (errors+1)^4 seconds, ±10%: about 1 s.
		require.WithinDuration(t, time.Now().Add(time.Second), next, 200*time.Millisecond)
		require.Equal(t, &workflow.RetryPolicy{}, (&workflow.Engine{}).RetryPolicy())
	})

	t.Run("WithoutContextReader", func(t *testing.T) {
		t.Parallel()
		// Without a ContextCycleFunc only plain jobs' cycles are read.
		row := func(metadata string) *rivertype.JobRow {
			return &rivertype.JobRow{Attempt: 1, MaxAttempts: 2, Metadata: []byte(metadata)}
		}
		require.Equal(t, fallback, retrypolicy.NextRetry(row(string(bpmn("R2/PT1S"))), nil, fallbackAt(fallback)))
		next := retrypolicy.NextRetry(row(`{"bpmn_retry_cycle": "R2/PT1M"}`), nil, fallbackAt(fallback))
		require.WithinDuration(t, time.Now().Add(time.Minute), next, time.Second)
	})
}

// TestExecutionsLeft: Camunda's retries of a running job count the execution
// under way, and never fall below 1.
func TestExecutionsLeft(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3, retrypolicy.ExecutionsLeft(&rivertype.JobRow{Attempt: 1, MaxAttempts: 3}))
	require.Equal(t, 1, retrypolicy.ExecutionsLeft(&rivertype.JobRow{Attempt: 3, MaxAttempts: 3}))
	require.Equal(t, 1, retrypolicy.ExecutionsLeft(&rivertype.JobRow{Attempt: 5, MaxAttempts: 3}))
}

// TestMaxAttemptsUnbounded: an unbounded cycle's MaxAttempts is the largest
// max_attempts River holds, the one the jobs handle (package job) checks
// SetRetries against; the largest bounded cycle River can hold has exactly
// that many executions.
func TestMaxAttemptsUnbounded(t *testing.T) {
	t.Parallel()
	require.Equal(t, job.MaxAttemptsUnbounded, retrypolicy.MaxAttemptsUnbounded)
	unbounded, err := retrypolicy.ParseCycle("R/PT1S")
	require.NoError(t, err)
	require.Equal(t, retrypolicy.MaxAttemptsUnbounded, retrypolicy.MaxAttempts(unbounded))

	largest, err := retrypolicy.ParseCycle("R32767/PT1S")
	require.NoError(t, err)
	require.Empty(t, retrypolicy.MaxAttemptsProblem(largest))
	require.Equal(t, 32767, retrypolicy.MaxAttempts(largest))
	tooMany, err := retrypolicy.ParseCycle("R32768/PT1S")
	require.NoError(t, err)
	require.Contains(t, retrypolicy.MaxAttemptsProblem(tooMany), "allows 32768 executions")
}

// TestWorkflowForwards: the names workflow kept for one release are the
// retrypolicy ones.
func TestWorkflowForwards(t *testing.T) {
	t.Parallel()
	require.Equal(t, retrypolicy.MaxAttemptsUnbounded, workflow.MaxAttemptsUnbounded)
	require.Equal(t, retrypolicy.CycleMetadataKey, workflow.RetryCycleMetadataKey)
	require.Same(t, retrypolicy.ErrConflict, workflow.ErrConflict)
	require.True(t, workflow.IsConflict(fmt.Errorf("x: %w", retrypolicy.ErrConflict)))
	require.False(t, workflow.IsConflict(fmt.Errorf("x")))
}
