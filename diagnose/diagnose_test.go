package diagnose_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/diagnose"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type taskArgs struct {
	Instance string `json:"instance"`
}

func (taskArgs) Kind() string { return "diagnose_task" }

func (a taskArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{ProcessInstanceID: a.Instance, ProcessDefinitionKey: "order", ActivityID: "charge"}
}

type env struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
	client *river.Client[pgx.Tx]
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ExclusiveScope: exclusive.ProcessInstance,
		// The tests fetch through the pilot without starting a client, so
		// no client proves it is alive.
		Liveness:           liveness.Config{Disabled: true},
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order"}},
		JobDefinitions: []workflow.JobDefinition{
			{ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "diagnose_task"},
		},
	}})
	require.NoError(t, b.Engine.SyncJobDefinitions(ctx))
	return &env{t: t, ctx: ctx, pool: b.DBPool, schema: schema, engine: b.Engine, client: b.Client}
}

func (e *env) insert(instance string, opts *river.InsertOpts) int64 {
	e.t.Helper()
	res, err := e.client.Insert(e.ctx, taskArgs{Instance: instance}, opts)
	require.NoError(e.t, err)
	return res.Job.ID
}

func (e *env) insertLifecycle(instance string, o lifecycle.Opts) int64 {
	e.t.Helper()
	opts, err := o.Apply(nil)
	require.NoError(e.t, err)
	return e.insert(instance, opts)
}

func (e *env) why(id int64) *diagnose.Diagnosis {
	e.t.Helper()
	d, err := e.engine.WhyWaiting(e.ctx, id)
	require.NoError(e.t, err)
	require.Equal(e.t, id, d.JobID)
	require.Equal(e.t, "process instance", d.ExclusiveScope, "the scope in force is named")
	return d
}

// fetch moves the next available job to running as client clientID would,
// taking its exclusive key.
func (e *env) fetch(clientID string) int64 {
	e.t.Helper()
	res, err := e.engine.Driver().PluginPilot().JobGetAvailable(e.ctx, e.engine.Driver().GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
		ClientID: clientID, MaxAttemptedBy: 100, MaxToLock: 1, Queue: river.QueueDefault, Schema: e.schema,
	})
	require.NoError(e.t, err)
	require.Len(e.t, res.Jobs, 1)
	return res.Jobs[0].ID
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	_, err := e.pool.Exec(e.ctx, fmt.Sprintf(sql, pgx.Identifier{e.schema}.Sanitize()), args...)
	require.NoError(e.t, err)
}

func TestWhyReady(t *testing.T) {
	e := newEnv(t)
	id := e.insert("order-1", nil)
	d := e.why(id)
	require.True(t, d.Waiting)
	require.Len(t, d.Reasons, 1)
	require.Equal(t, diagnose.Ready, d.Reasons[0].Code)
	require.Equal(t, "order-1", d.ProcessInstanceID)
	require.Equal(t, "charge-async", d.JobDefinitionID)
	require.NotEmpty(t, d.Unknown, "what the database does not record is said")
}

func TestWhyKeyHeld(t *testing.T) {
	e := newEnv(t)
	holder := e.insert("order-4711", nil)
	require.Equal(t, holder, e.fetch("worker-7f3a"))
	second := e.insert("order-4711", nil)
	third := e.insert("order-4711", nil)

	d := e.why(second)
	require.True(t, d.Waiting)
	r := d.Reason(diagnose.KeyHeld)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.Equal(t, "order-4711", r.Key)
	require.Equal(t, holder, r.HolderJobID)
	require.Equal(t, "worker-7f3a", r.HolderClientID)
	require.NotNil(t, r.Since)
	require.WithinDuration(t, time.Now(), *r.Since, time.Minute)
	require.False(t, d.Has(diagnose.KeyJobsAhead), "the second job is the key's next")
	require.False(t, d.Has(diagnose.Ready))

	d = e.why(third)
	require.Equal(t, holder, d.Reason(diagnose.KeyHeld).HolderJobID)
	require.Equal(t, 1, d.Reason(diagnose.KeyJobsAhead).JobsAhead)

	d = e.why(holder)
	require.False(t, d.Waiting)
	require.Equal(t, diagnose.Running, d.Reasons[0].Code)
}

func TestWhySuspended(t *testing.T) {
	e := newEnv(t)
	byInstance := e.insert("order-1", nil)
	_, err := e.engine.SuspendProcessInstance(e.ctx, "order-1")
	require.NoError(t, err)
	d := e.why(byInstance)
	r := d.Reason(diagnose.Suspended)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.Len(t, r.SuspendedBy, 1)
	require.Equal(t, diagnose.Target{Type: "process_instance", ID: "order-1", Since: r.SuspendedBy[0].Since}, r.SuspendedBy[0])
	require.Contains(t, r.Text, `process instance "order-1"`)
	require.NotNil(t, r.Since)

	byDefinition := e.insert("order-2", nil)
	_, err = e.engine.SuspendJobDefinition(e.ctx, "charge-async", &workflow.SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	d = e.why(byDefinition)
	r = d.Reason(diagnose.Suspended)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.Len(t, r.SuspendedBy, 1)
	require.Equal(t, "job_definition", r.SuspendedBy[0].Type)
	require.Equal(t, "charge-async", r.SuspendedBy[0].ID)

	alone := e.insert("order-3", nil)
	_, err = e.engine.ActivateJobDefinition(e.ctx, "charge-async", &workflow.SuspendOpts{IncludeJobs: true})
	require.NoError(t, err)
	require.False(t, e.why(alone).Has(diagnose.Suspended))
	changed, err := e.engine.SuspendJob(e.ctx, alone)
	require.NoError(t, err)
	require.True(t, changed)
	r = e.why(alone).Reason(diagnose.Suspended)
	require.NotNil(t, r)
	require.Empty(t, r.SuspendedBy)
	require.Equal(t, "The job itself is suspended.", r.Text)
}

func TestWhyPrerequisites(t *testing.T) {
	e := newEnv(t)
	first := e.insert("order-1", nil)
	second := e.insert("order-1", nil)
	dependent := e.insertLifecycle("order-1", lifecycle.Opts{DependsOn: []int64{first, second}})
	// The first prerequisite completes.
	e.exec(`UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, first)

	d := e.why(dependent)
	r := d.Reason(diagnose.Prerequisites)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.Len(t, r.Prerequisites, 1)
	require.Equal(t, second, r.Prerequisites[0].JobID)
	require.Contains(t, r.Text, "1 of 2 completed")
	require.Contains(t, r.Text, fmt.Sprint(second))
}

func TestWhyPending(t *testing.T) {
	e := newEnv(t)
	id := e.insertLifecycle("order-1", lifecycle.Opts{Pending: true})
	d := e.why(id)
	require.True(t, d.Waiting)
	require.True(t, d.Has(diagnose.Pending), "%+v", d.Reasons)
	require.Contains(t, d.Reason(diagnose.Pending).Fix, "Queue")

	_, err := e.engine.QueueJobs(e.ctx, id)
	require.NoError(t, err)
	require.False(t, e.why(id).Has(diagnose.Pending))
}

func TestWhyExpired(t *testing.T) {
	e := newEnv(t)
	// An expiry already past is refused at insert: the job expires while it
	// waits (no client works the schema).
	at := time.Now().Add(time.Second)
	id := e.insertLifecycle("order-1", lifecycle.Opts{ExpiresAt: &at})
	time.Sleep(time.Until(at) + 10*time.Millisecond)
	d := e.why(id)
	require.True(t, d.Waiting)
	r := d.Reason(diagnose.Expired)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.WithinDuration(t, at, *r.At, time.Millisecond)

	// The leader's expiry service discards it: still expired, no longer waiting.
	expired, _, err := lifecycle.ExpireDue(e.ctx, e.pool, e.schema)
	require.NoError(t, err)
	require.Contains(t, expired, id)
	d = e.why(id)
	require.False(t, d.Waiting)
	require.Equal(t, diagnose.Expired, d.Reasons[0].Code)
	require.False(t, d.Has(diagnose.Incident))
}

func TestWhyQueuePaused(t *testing.T) {
	e := newEnv(t)
	id := e.insert("order-1", &river.InsertOpts{Queue: "payments"})
	require.False(t, e.why(id).Has(diagnose.QueuePaused))
	e.exec(`INSERT INTO %s.river_queue (name, paused_at, updated_at) VALUES ('payments', now(), now())`)
	r := e.why(id).Reason(diagnose.QueuePaused)
	require.NotNil(t, r)
	require.Equal(t, "payments", r.Queue)
}

func TestWhyScheduled(t *testing.T) {
	e := newEnv(t)
	due := time.Now().Add(time.Hour).UTC()
	id := e.insert("order-1", &river.InsertOpts{ScheduledAt: due})
	d := e.why(id)
	r := d.Reason(diagnose.Scheduled)
	require.NotNil(t, r, "%+v", d.Reasons)
	require.WithinDuration(t, due, *r.At, time.Millisecond)
	require.False(t, d.Has(diagnose.Ready))
}

func TestWhyIncident(t *testing.T) {
	e := newEnv(t)
	id := e.insert("order-1", nil)
	require.NoError(t, e.engine.SetJobRetries(e.ctx, id, 0))
	d := e.why(id)
	require.False(t, d.Waiting)
	require.Equal(t, diagnose.Incident, d.Reasons[0].Code)
	require.Contains(t, d.Reasons[0].Fix, "retries")
}

func TestWhyNoLiveClient(t *testing.T) {
	e := newEnv(t)
	id := e.insert("order-1", nil)
	require.False(t, e.why(id).Has(diagnose.NoLiveClient), "no session recorded: liveness unknown, nothing said")
	// A session whose lock nobody holds: its client is gone.
	e.exec(`INSERT INTO %s.river_bpmn_client_session (client_id, pid, lock_class, lock_obj) VALUES ('worker-gone', 1, 1, 1)`)
	d := e.why(id)
	require.True(t, d.Has(diagnose.NoLiveClient), "%+v", d.Reasons)
	require.False(t, d.Has(diagnose.Ready))
}

func TestWhyNotFound(t *testing.T) {
	e := newEnv(t)
	_, err := e.engine.WhyWaiting(e.ctx, 999_999)
	require.ErrorIs(t, err, workflow.ErrNotFound)
}

// TestWhyKeyHeldAndHeldBack: every reason is given: a job that is
// suspended, or scheduled for later, while another job holds its exclusive
// key has both reasons, the key's holder named.
func TestWhyKeyHeldAndHeldBack(t *testing.T) {
	e := newEnv(t)
	holder := e.insert("order-4711", nil)
	require.Equal(t, holder, e.fetch("worker-7f3a"))
	suspended := e.insert("order-4711", nil)
	changed, err := e.engine.SuspendJob(e.ctx, suspended)
	require.NoError(t, err)
	require.True(t, changed)
	scheduled := e.insert("order-4711", &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})

	for id, other := range map[int64]diagnose.Code{suspended: diagnose.Suspended, scheduled: diagnose.Scheduled} {
		d := e.why(id)
		require.True(t, d.Waiting)
		require.True(t, d.Has(other), "%+v", d.Reasons)
		r := d.Reason(diagnose.KeyHeld)
		require.NotNil(t, r, "the held key is a reason too: %+v", d.Reasons)
		require.Equal(t, holder, r.HolderJobID)
		require.Equal(t, "worker-7f3a", r.HolderClientID)
		require.Contains(t, r.Text, fmt.Sprintf("it also waits for job %d to end", holder))
	}
}
