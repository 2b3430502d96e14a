package job

import (
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestRetriesUpdate: SetRetries's decision, a job's new state and
// max_attempts from its state, attempt and the retries asked, is Camunda's
// (a discarded job with retries is revived, a waiting one with none is
// discarded) within River's smallint max_attempts, and refused for a
// running, completed or cancelled job. (An internal test: the decision is a
// pure function the external tests reach only through the database.)
func TestRetriesUpdate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state                rivertype.JobState
		attempt, maxAttempts int
		n                    int
		wantState            rivertype.JobState
		wantMaxAttempts      int
		inError              string
	}{
		{rivertype.JobStateDiscarded, 3, 3, 2, rivertype.JobStateAvailable, 5, ""},
		{rivertype.JobStateDiscarded, 3, 3, 0, rivertype.JobStateDiscarded, 3, ""},
		{rivertype.JobStateRetryable, 1, 4, 6, rivertype.JobStateRetryable, 7, ""},
		{rivertype.JobStateAvailable, 0, 3, 1, rivertype.JobStateAvailable, 1, ""},
		{rivertype.JobStateAvailable, 0, 3, 0, rivertype.JobStateDiscarded, 1, ""},
		{rivertype.JobStateScheduled, 2, 3, 0, rivertype.JobStateDiscarded, 2, ""},
		{rivertype.JobStatePending, 0, 3, 4, rivertype.JobStatePending, 4, ""},
		{rivertype.JobStateAvailable, 10, 11, MaxAttemptsUnbounded - 10, rivertype.JobStateAvailable, MaxAttemptsUnbounded, ""},
		{rivertype.JobStateAvailable, 10, 11, MaxAttemptsUnbounded - 9, "", 0, "job: job 7: n 32758 is too large: the job has run 10 times, and River's max_attempts holds at most 32767"},
		{rivertype.JobStateRunning, 1, 3, 2, "", 0, "job: job 7 is running: set its retries when the execution has ended"},
		{rivertype.JobStateCompleted, 1, 3, 2, "", 0, "job: job 7 is completed: only unfinished and discarded jobs have retries"},
		{rivertype.JobStateCancelled, 1, 3, 2, "", 0, "job: job 7 is cancelled"},
	}
	for _, tc := range cases {
		state, maxAttempts, err := retriesUpdate(7, tc.state, tc.attempt, tc.maxAttempts, tc.n)
		if tc.inError != "" {
			require.ErrorContains(t, err, tc.inError)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.wantState, state, "%+v", tc)
		require.Equal(t, tc.wantMaxAttempts, maxAttempts, "%+v", tc)
	}
}
