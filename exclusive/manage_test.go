package exclusive

import (
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestExclusiveLockAndWaitPrint: locks and waits print as sentences with %v
// and %+v, also as a wait's Holder and in a slice, never as pointers.
func TestExclusiveLockAndWaitPrint(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lock := newLock("pi-1", 11, 1, "client-a", "default", at, ptr(string(rivertype.JobStateRunning)), ptr(int16(1)), nil, nil)
	stale := newLock("pi-2", 12, 1, "client-a", "default", at, ptr(string(rivertype.JobStateCompleted)), ptr(int16(1)), nil, nil)
	gone := newLock("pi-3", 13, 2, "client-b", "q2", at, nil, nil, nil, nil)

	want := `key "pi-1" held by job 11 attempt 1 (client client-a, queue default, since 2026-01-02T03:04:05Z)`
	require.Equal(t, want, fmt.Sprintf("%+v", lock))
	require.Equal(t, want, fmt.Sprintf("%v", *lock))
	require.Equal(t, `key "pi-2" held by job 12 attempt 1 (client client-a, queue default, since 2026-01-02T03:04:05Z), stale: the job is now completed at attempt 1`, stale.String())
	require.Contains(t, gone.String(), "stale: the job no longer exists")
	require.Equal(t, "["+want+" "+stale.String()+"]", fmt.Sprintf("%+v", []*Lock{lock, stale}))

	wait := &Wait{JobID: 20, State: rivertype.JobStateAvailable, Queue: "default", Key: "pi-1", Holder: lock, Waiting: true, KeyJobsAhead: 2}
	require.Equal(t, `job 20 (available, queue default): key "pi-1", waiting for `+want+"; 2 job(s) of the key ahead", fmt.Sprintf("%+v", wait))
	require.Equal(t, `job 11 (running, queue default): key "pi-1", held by this job`,
		Wait{JobID: 11, State: rivertype.JobStateRunning, Queue: "default", Key: "pi-1", Holder: lock}.String())
	require.Equal(t, `job 21 (available, queue default): key "pi-9", free`,
		Wait{JobID: 21, State: rivertype.JobStateAvailable, Queue: "default", Key: "pi-9"}.String())
	require.Equal(t, `job 22 (available, queue default): no exclusive key (not exclusive, or of no process instance), never held back`,
		Wait{JobID: 22, State: rivertype.JobStateAvailable, Queue: "default"}.String())
	require.Equal(t, `job 23 (available, queue default): exclusivity is not enforced on this schema (exclusive scope none), never held back`,
		Wait{JobID: 23, State: rivertype.JobStateAvailable, Queue: "default", Scope: None}.String())
	require.NotContains(t, fmt.Sprintf("%+v", wait), "0x")
}

func ptr[T any](v T) *T { return &v }
