package console_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/workflow"
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

// TestApplyScheduledSuspensionButton: the Suspended page's Apply now button
// applies a delayed suspension at once (Camunda: executing the delayed
// suspension's job, ProcessDefinitionSuspensionTest
// testDelayedSuspendProcessDefinition).
func TestApplyScheduledSuspensionButton(t *testing.T) {
	e := newEnv(t)
	b := e.serve(nil)
	res, err := e.engine.SuspendJobDefinition(e.ctx, "charge-async", &workflow.SuspendOpts{At: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	status, body := b.get("/suspensions")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, ">Apply now</button>")
	_, body = b.submit("/suspensions", "/suspensions/"+id(res.ScheduledID)+"/apply", nil)
	require.Contains(t, body, "Schedule "+id(res.ScheduledID)+" applied now: Job definition &#34;charge-async&#34; suspended")
	require.Contains(t, body, "No change is scheduled.")
	state, err := e.engine.JobDefinition(e.ctx, "charge-async")
	require.NoError(t, err)
	require.True(t, state.Suspended)
}
