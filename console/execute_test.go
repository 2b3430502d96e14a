package console_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestJobExecuteButton: the job page's Execute now button runs a job due in
// an hour now (Camunda Cockpit's "execute job" on a job, which calls
// managementService.executeJob) and shows its outcome; a finished job has
// no such button.
func TestJobExecuteButton(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	done := e.startWorker(&atomic.Bool{})
	jobID := e.insert("pi-exec", &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	page := "/jobs/" + id(jobID)

	status, body := b.get(page)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, ">Execute now</button>")
	_, body = b.submit(page, page+"/execute", nil)
	require.Contains(t, body, "Job "+id(jobID)+" executed: completed")
	require.Equal(t, jobID, <-done)
	require.Equal(t, rivertype.JobStateCompleted, e.jobState(jobID))
	require.NotContains(t, body, ">Execute now</button>")

	_, body = b.submit("/definitions", page+"/execute", nil)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "is completed")
}
