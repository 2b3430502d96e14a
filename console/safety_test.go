package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/console"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/search"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// startLiveClient starts a working client with liveness on (the default)
// on the env's schema, and returns its id; it stops with the test.
func (e *env) startLiveClient() string {
	e.t.Helper()
	engine, err := workflow.NewEngine(e.pool, &workflow.Config{Schema: e.schema, ExclusiveScope: exclusive.ProcessInstance})
	require.NoError(e.t, err)
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{fail: &atomic.Bool{}, done: make(chan int64, 100)})
	client, err := workflow.NewClient(engine, &river.Config{
		Schema: e.schema, ID: fmt.Sprintf("live-worker-%d", time.Now().UnixNano()),
		Queues:  map[string]river.QueueConfig{"elsewhere": {MaxWorkers: 1}},
		Workers: workers,
	})
	require.NoError(e.t, err)
	require.NoError(e.t, client.Start(e.ctx))
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})
	require.Eventually(e.t, func() bool {
		alive, err := e.engine.AliveClients(e.ctx)
		return err == nil && len(alive) == 1
	}, 20*time.Second, 20*time.Millisecond, "the client's liveness session")
	return client.ID()
}

// TestRecordScopeRefusedWhileClientsAlive: with a client of the schema
// alive, recording another exclusive scope from the console shows the
// client on the confirmation page; confirmed without "record it anyway" it
// is refused, naming the client, and nothing is recorded; with it, the
// scope is recorded.
func TestRecordScopeRefusedWhileClientsAlive(t *testing.T) {
	e := newEnv(t)
	clientID := e.startLiveClient()
	b := e.serve(nil)

	ask, status, body := b.confirm("/exclusive/locks", "/exclusive/scope", url.Values{"scope": {"none"}}, false)
	require.Contains(t, ask, `id="confirm-alive"`)
	require.Contains(t, ask, "<td>"+clientID+"</td>")
	require.Contains(t, ask, `id="confirm-force"`)
	require.Contains(t, ask, "1 client(s) of the schema are alive")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `class="flash error"`)
	require.Contains(t, body, "not recording exclusive scope none: 1 client(s) of the schema are alive")
	require.Contains(t, body, clientID)
	scope, err := e.engine.ExclusiveScopeInForce(e.ctx)
	require.NoError(t, err)
	require.Equal(t, exclusive.ProcessInstance, scope, "refused: nothing recorded")

	// The scope already recorded: no alive client listed, nothing to force.
	ask, _, body = b.confirm("/exclusive/locks", "/exclusive/scope", url.Values{"scope": {"process-instance"}}, false)
	require.Contains(t, ask, "It is the scope already recorded: nothing changes.")
	require.NotContains(t, ask, `id="confirm-force"`)
	require.Contains(t, body, "Recorded the exclusive scope process instance (was process instance)")

	_, _, body = b.confirm("/exclusive/locks", "/exclusive/scope", url.Values{"scope": {"none"}}, true)
	require.Contains(t, body, "Recorded the exclusive scope none (was process instance)")
	scope, err = e.engine.ExclusiveScopeInForce(e.ctx)
	require.NoError(t, err)
	require.Equal(t, exclusive.None, scope)
}

// TestConfirmationChangesNothing: each destructive action, posted without
// the confirmation, renders the confirmation page and changes nothing: the
// job stays available, the timer waits, the events stay.
func TestConfirmationChangesNothing(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, e.engine.EnableEvents(e.ctx))
	jobID := e.insert("pi-safe", nil)
	b := e.serve(nil)
	_, page := b.get("/jobs")
	token := b.token(page)
	for action, form := range map[string]url.Values{
		fmt.Sprintf("/jobs/%d/stop", jobID): {},
		"/instances/pi-safe/stop":           {},
		"/bulk/jobs":                        {"scope": {"filter"}, "action": {"stop"}},
		"/events/prune":                     {"older_than": {"0s"}},
		"/events/disable":                   {},
		"/indexes/fetch-order/disable":      {},
		"/exclusive/indexes/disable":        {},
		"/indexes/fairness/disable":         {},
		"/timers/prune":                     {"older_than": {"0s"}},
		"/exclusive/scope":                  {"scope": {"none"}},
	} {
		form.Set("csrf", token)
		form.Set("return", "/jobs")
		status, body := b.post(action, form)
		require.Equal(t, http.StatusOK, status, action)
		require.Contains(t, body, `id="confirm"`, action)
		require.Contains(t, body, `<input type="hidden" name="confirmed" value="yes">`, action)
		require.NotContains(t, body, "confirm(", action)
		require.Contains(t, body, `<a href="/jobs" id="confirm-cancel">Cancel</a>`, action)
	}
	require.Equal(t, rivertype.JobStateAvailable, e.jobState(jobID))
	on, err := e.engine.EventsEnabled(e.ctx)
	require.NoError(t, err)
	require.True(t, on)
	recorded, err := e.engine.RecordedExclusiveScope(e.ctx)
	require.NoError(t, err)
	require.Nil(t, recorded)

	// The bulk count over a filter is the filter's count.
	_, body := b.post("/bulk/jobs", url.Values{"csrf": {token}, "scope": {"filter"}, "action": {"stop"}, "instance": {"pi-none"}})
	require.Contains(t, body, ">Stop 0 job(s)</button>")
	_, body = b.post("/bulk/jobs", url.Values{"csrf": {token}, "scope": {"filter"}, "action": {"stop"}, "instance": {"pi-safe"}})
	require.Contains(t, body, ">Stop 1 job(s)</button>")
}

// TestBulkResumesAfterConsoleRestart: a bulk suspend over a filter, its
// console closed after its first batches (the process stopping), is a
// running row with its progress saved; a new console on the same database
// takes it over on its first request and finishes it, each job suspended
// once, and its page says it ran twice.
func TestBulkResumesAfterConsoleRestart(t *testing.T) {
	e := newEnv(t)
	const n = 3 * bulk.DefaultBatchSize
	insert := make([]river.InsertManyParams, n)
	for i := range insert {
		insert[i] = river.InsertManyParams{Args: taskArgs{Instance: fmt.Sprintf("bulk-%04d", i)}}
	}
	_, err := e.client.InsertMany(e.ctx, insert)
	require.NoError(t, err)

	first, err := console.New(e.engine, nil)
	require.NoError(t, err)
	b := e.serveHandler(first)
	_, page := b.get("/jobs")
	form := url.Values{"csrf": {b.token(page)}, "scope": {"filter"}, "action": {"suspend"}, "instance": {"bulk-"}, "confirmed": {"yes"}}
	status, loc := b.postNoRedirect("/bulk/jobs", form)
	require.Equal(t, http.StatusSeeOther, status)
	var opID int64
	_, err = fmt.Sscanf(loc, "/bulk/%d", &opID)
	require.NoError(t, err)

	// Stop the first console once a batch is saved, before the end.
	require.Eventually(t, func() bool {
		op, err := e.engine.BulkOperation(e.ctx, opID)
		require.NoError(t, err)
		return op.Progress.Batches >= 1
	}, 30*time.Second, time.Millisecond)
	first.Close()
	op, err := e.engine.BulkOperation(e.ctx, opID)
	require.NoError(t, err)
	if op.State != bulk.StateRunning {
		t.Skipf("the action finished (%s) before the console closed: nothing to resume on this machine", op.State)
	}
	saved := op.Progress.Done
	require.Positive(t, saved)
	require.Less(t, saved, n)
	suspended, err := e.engine.CountJobs(e.ctx, &search.Filter{Held: "suspended"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, suspended, int64(saved))
	require.Less(t, suspended, int64(n), "stopped mid-way")

	// A new console: its first request takes the action over.
	second, err := console.New(e.engine, nil)
	require.NoError(t, err)
	t.Cleanup(second.Close)
	b2 := e.serveHandler(second)
	body := waitBulk(t, b2, loc)
	require.Contains(t, body, fmt.Sprintf("%d of %d done, %d changed, 0 failed", n, n, n), "each job walked once")
	require.Contains(t, body, "taken over: run 2 times")
	suspended, err = e.engine.CountJobs(e.ctx, &search.Filter{Held: "suspended"})
	require.NoError(t, err)
	require.Equal(t, int64(n), suspended)
}
