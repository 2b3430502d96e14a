package deployment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// taskArgs is the job of these tests: any activity's work.
type taskArgs struct {
	Fail bool `json:"fail,omitempty"`
}

func (taskArgs) Kind() string { return "deployment_task" }

type taskWorker struct {
	river.WorkerDefaults[taskArgs]
}

func (taskWorker) Work(_ context.Context, job *river.Job[taskArgs]) error {
	if job.Args.Fail {
		return errors.New("the task failed")
	}
	return nil
}

type fixture struct {
	pool   *pgxpool.Pool
	schema string
	engine *workflow.Engine
	client *river.Client[pgx.Tx]
}

func setup(t *testing.T, config workflow.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	schema := riverdbtest.TestSchema(ctx, t, riverbpmntest.Driver(t), nil)
	b := riverbpmntest.New(ctx, t, schema, &riverbpmntest.Opts{Config: &config, ClientConfig: &river.Config{}})
	return &fixture{pool: b.DBPool, schema: schema, engine: b.Engine, client: b.Client}
}

// worker returns a started client of driver working taskArgs with
// maxWorkers, subscribed to kinds; it is stopped when the test ends.
func (f *fixture) worker(t *testing.T, driver *workflow.Driver, maxWorkers int, kinds ...river.EventKind) <-chan *river.Event {
	t.Helper()
	ctx := context.Background()
	workers := river.NewWorkers()
	river.AddWorker(workers, taskWorker{})
	config, err := f.engine.ClientConfig(&river.Config{
		Schema: f.schema, Workers: workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		FetchPollInterval: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	client, err := river.NewClient(driver, config)
	require.NoError(t, err)
	events, cancel := client.Subscribe(kinds...)
	t.Cleanup(cancel)
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(ctx)) })
	return events
}

func resource(t *testing.T, path string) deployment.Resource {
	t.Helper()
	content, err := os.ReadFile(filepath.Join("..", "bpmn", "testdata", path))
	require.NoError(t, err)
	return deployment.Resource{Name: filepath.Base(path), Content: content}
}

func (f *fixture) insert(t *testing.T, jobDefinition string, args taskArgs) *rivertype.JobRow {
	t.Helper()
	res, err := f.client.Insert(context.Background(), args,
		workflow.JobContext{JobDefinitionID: jobDefinition, ProcessInstanceID: "instance-1"}.InsertOpts())
	require.NoError(t, err)
	return res.Job
}

func jobContext(t *testing.T, job *rivertype.JobRow) workflow.JobContext {
	t.Helper()
	jc, err := workflow.JobContextOf(job)
	require.NoError(t, err)
	return jc
}

// TestCreateCamundaPriorities deploys Camunda's jobPrioProcess and checks
// that jobs inserted for its activities get what Camunda's
// JobPrioritizationBpmnConstantValueTest expects: 10 from the process for
// task1, 5 from the activity for task2, before and after alike.
func TestCreateCamundaPriorities(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	dep, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{
		Name: "priorities", Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")},
	})
	require.NoError(t, err)
	require.False(t, dep.Duplicate)
	require.Len(t, dep.ProcessDefinitions, 1)
	pd := dep.ProcessDefinitions[0]
	require.Equal(t, "jobPrioProcess:1", pd.ID)
	require.Equal(t, 1, pd.Version)
	require.Equal(t, "10", pd.Priority)
	var ids []string
	for _, jd := range pd.JobDefinitions {
		ids = append(ids, jd.ID)
	}
	require.Equal(t, []string{
		"jobPrioProcess:1:task1:async-before", "jobPrioProcess:1:task1:async-after",
		"jobPrioProcess:1:task2:async-before", "jobPrioProcess:1:task2:async-after",
	}, ids)

	for jobDef, want := range map[string]int64{
		"jobPrioProcess:task1:async-before":   10,
		"jobPrioProcess:task1:async-after":    10,
		"jobPrioProcess:1:task2:async-before": 5,
		"jobPrioProcess:task2:async-after":    5,
	} {
		jc := jobContext(t, f.insert(t, jobDef, taskArgs{}))
		require.Equal(t, want, *jc.Priority, jobDef)
		require.Equal(t, "jobPrioProcess", jc.ProcessDefinitionKey)
		require.Equal(t, dep.ID, jc.DeploymentID)
		require.True(t, strings.HasPrefix(jc.JobDefinitionID, "jobPrioProcess:1:"), jc.JobDefinitionID)
		require.Equal(t, workflow.JobTypeAsync, jc.JobType)
	}

	// Get shows the definitions with their unfinished jobs.
	got, err := f.engine.Deployments().Get(ctx, dep.ID)
	require.NoError(t, err)
	require.Equal(t, []deployment.ResourceInfo{dep.Resources[0]}, got.Resources)
	require.Len(t, got.ProcessDefinitions[0].JobDefinitions, 4)
	for _, jd := range got.ProcessDefinitions[0].JobDefinitions {
		require.EqualValues(t, 1, jd.UnfinishedJobs, jd.ID)
	}

	// An overriding priority set at run time works on a deployed definition
	// as on a declared one.
	require.NoError(t, f.engine.SetOverridingJobPriority(ctx, "jobPrioProcess:1:task2:async-before", 99, false))
	require.EqualValues(t, 99, *jobContext(t, f.insert(t, "jobPrioProcess:task2:async-before", taskArgs{})).Priority)

	// An unknown id is the error it always was.
	_, err = f.client.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "jobPrioProcess:task9:async-before"}.InsertOpts())
	require.ErrorContains(t, err, `"jobPrioProcess:task9:async-before": is not a declared job definition, nor a deployed one`)
}

// TestRunWithRetryCycle deploys Flowable's failed-job model (activiti
// namespace, R5/PT5M: Flowable's FailedJobRetryCmdTest counts 5 executions)
// and works a failing job of its activity against PostgreSQL: River runs it
// once, then holds it for five minutes, with five executions in all.
func TestRunWithRetryCycle(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	dep, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{
		Name: "retries", Resources: []deployment.Resource{resource(t, "flowable/FailedJobRetryCmdTest.testFailedServiceTask.bpmn20.xml")},
	})
	require.NoError(t, err)

	failing := f.insert(t, "failedServiceTask:failingServiceTask:async-before", taskArgs{Fail: true})
	require.Equal(t, 5, failing.MaxAttempts)
	jc := jobContext(t, failing)
	require.Equal(t, "R5/PT5M", jc.RetryCycle)
	require.Equal(t, dep.ID, jc.DeploymentID)
	require.True(t, *jc.Exclusive)
	passing := f.insert(t, "failedServiceTask:failingServiceTask:async-before", taskArgs{})

	events := f.worker(t, f.engine.Driver(), 2, river.EventKindJobFailed, river.EventKindJobCompleted)
	seen := map[int64]*river.Event{}
	for len(seen) < 2 {
		select {
		case ev := <-events:
			seen[ev.Job.ID] = ev
		case <-time.After(time.Minute):
			t.Fatalf("the jobs did not run within a minute (%d events)", len(seen))
		}
	}
	require.Equal(t, rivertype.JobStateCompleted, seen[passing.ID].Job.State)
	failed := seen[failing.ID].Job
	require.Equal(t, rivertype.JobStateRetryable, failed.State)
	require.Equal(t, 1, failed.Attempt)
	require.Len(t, failed.Errors, 1)
	wait := failed.ScheduledAt.Sub(failed.Errors[0].At)
	require.InDelta(t, (5 * time.Minute).Seconds(), wait.Seconds(), 1, "the retry waits the cycle's PT5M from the failure")
}

// TestVersionsAndDuplicates: an identical redeploy deploys nothing; a
// changed one is version 2 with new job definitions, while jobs of version
// 1 keep theirs.
func TestVersionsAndDuplicates(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	model := func(priority, cycle string) deployment.Resource {
		return deployment.Resource{Name: "invoice.bpmn", Content: []byte(`<?xml version="1.0"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <process id="invoice" name="Invoice" camunda:jobPriority="` + priority + `">
    <serviceTask id="charge" camunda:asyncBefore="true">
      <extensionElements><camunda:failedJobRetryTimeCycle>` + cycle + `</camunda:failedJobRetryTimeCycle></extensionElements>
    </serviceTask>
  </process>
</definitions>`)}
	}
	handle := f.engine.Deployments()
	v1, err := handle.Create(ctx, deployment.CreateParams{Name: "invoice", Resources: []deployment.Resource{model("10", "R5/PT5M")}})
	require.NoError(t, err)
	old := f.insert(t, "invoice:charge:async-before", taskArgs{})

	again, err := handle.Create(ctx, deployment.CreateParams{Name: "invoice", Resources: []deployment.Resource{model("10", "R5/PT5M")}})
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, v1.ID, again.ID)

	v2, err := handle.Create(ctx, deployment.CreateParams{Name: "invoice", Resources: []deployment.Resource{model("20", "R2/PT1M")}})
	require.NoError(t, err)
	require.NotEqual(t, v1.ID, v2.ID)
	require.Equal(t, "invoice:2", v2.ProcessDefinitions[0].ID)
	require.Equal(t, "invoice:2:charge:async-before", v2.ProcessDefinitions[0].JobDefinitions[0].ID)
	require.NotEqual(t, v1.Resources[0].Checksum, v2.Resources[0].Checksum)

	newer := jobContext(t, f.insert(t, "invoice:charge:async-before", taskArgs{}))
	require.Equal(t, "invoice:2:charge:async-before", newer.JobDefinitionID)
	require.EqualValues(t, 20, *newer.Priority)
	require.Equal(t, "R2/PT1M", newer.RetryCycle)
	require.Equal(t, v2.ID, newer.DeploymentID)

	oldJob, err := f.client.JobGet(ctx, old.ID)
	require.NoError(t, err)
	oldJC := jobContext(t, oldJob)
	require.Equal(t, "invoice:1:charge:async-before", oldJC.JobDefinitionID)
	require.EqualValues(t, 10, *oldJC.Priority)
	require.Equal(t, "R5/PT5M", oldJC.RetryCycle)
	require.Equal(t, 5, oldJob.MaxAttempts)
	// And version 1 can still be named.
	require.EqualValues(t, 10, *jobContext(t, f.insert(t, "invoice:1:charge:async-before", taskArgs{})).Priority)

	// Another engine on the schema (another process) sees the deployed
	// definitions without deploying anything.
	other, err := workflow.NewEngine(f.pool, &workflow.Config{Schema: f.schema})
	require.NoError(t, err)
	otherClient, err := workflow.NewClient(other, &river.Config{Schema: f.schema})
	require.NoError(t, err)
	res, err := otherClient.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "invoice:charge:async-before"}.InsertOpts())
	require.NoError(t, err)
	require.EqualValues(t, 20, *jobContext(t, res.Job).Priority)

	// A version deployed by the first engine reaches the other one's alias
	// within deployment.AliasCacheTTL.
	v3, err := handle.Create(ctx, deployment.CreateParams{Name: "invoice", Resources: []deployment.Resource{model("30", "R2/PT1M")}})
	require.NoError(t, err)
	require.Equal(t, "invoice:3", v3.ProcessDefinitions[0].ID)
	time.Sleep(deployment.AliasCacheTTL)
	res, err = otherClient.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "invoice:charge:async-before"}.InsertOpts())
	require.NoError(t, err)
	require.Equal(t, "invoice:3:charge:async-before", jobContext(t, res.Job).JobDefinitionID)
	require.EqualValues(t, 30, *jobContext(t, res.Job).Priority)

	page, err := handle.List(ctx, deployment.ListParams{Limit: 1})
	require.NoError(t, err)
	require.Len(t, page.Deployments, 1)
	require.Equal(t, v3.ID, page.Deployments[0].ID, "newest first")
	page, err = handle.List(ctx, deployment.ListParams{After: page.Cursor, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, v2.ID, page.Deployments[0].ID)
	require.NotEmpty(t, page.Cursor)
	page, err = handle.List(ctx, deployment.ListParams{After: page.Cursor, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, v1.ID, page.Deployments[0].ID)
	require.Equal(t, "invoice:1", page.Deployments[0].ProcessDefinitions[0].ID)
	page, err = handle.List(ctx, deployment.ListParams{After: page.Cursor, Limit: 1})
	require.NoError(t, err)
	require.Empty(t, page.Deployments)
	require.Empty(t, page.Cursor)
}

// TestDeleteRefusedWithUnfinishedJobs: a deployment with unfinished jobs is
// deleted only with cascade, which deletes them.
func TestDeleteRefusedWithUnfinishedJobs(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	handle := f.engine.Deployments()
	dep, err := handle.Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	require.NoError(t, err)
	job := f.insert(t, "jobPrioProcess:task1:async-before", taskArgs{})

	_, err = handle.Delete(ctx, dep.ID, deployment.DeleteParams{})
	require.ErrorIs(t, err, deployment.ErrUnfinishedJobs)
	require.ErrorContains(t, err, "1 available")
	_, err = handle.Get(ctx, dep.ID)
	require.NoError(t, err, "the refused delete left the deployment")

	res, err := handle.Delete(ctx, dep.ID, deployment.DeleteParams{Cascade: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.DeletedJobs)
	_, err = f.client.JobGet(ctx, job.ID)
	require.ErrorIs(t, err, river.ErrNotFound)
	_, err = handle.Get(ctx, dep.ID)
	require.ErrorIs(t, err, deployment.ErrNotFound)
	var n int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{f.schema, "river_bpmn_job_definition"}.Sanitize()).Scan(&n))
	require.Zero(t, n, "the deployment's job definitions went with it")
	_, err = f.client.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "jobPrioProcess:task1:async-before"}.InsertOpts())
	require.ErrorContains(t, err, "nor a deployed one")

	// A deployment without jobs is deleted without cascade.
	dep, err = handle.Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	require.NoError(t, err)
	require.Equal(t, "jobPrioProcess:2", dep.ProcessDefinitions[0].ID, "versions keep counting after a delete")
	_, err = handle.Delete(ctx, dep.ID, deployment.DeleteParams{})
	require.NoError(t, err)
	_, err = handle.Delete(ctx, dep.ID, deployment.DeleteParams{})
	require.ErrorIs(t, err, deployment.ErrNotFound)
}

// TestCreateBadInputDeploysNothing: one bad resource among good ones is one
// error naming file, element, attribute and value, and nothing is written.
func TestCreateBadInputDeploysNothing(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	handle := f.engine.Deployments()
	good := resource(t, "camunda/jobPrioProcess.bpmn20.xml")
	for _, tc := range []struct {
		name string
		bad  deployment.Resource
		want []string
	}{
		{"priority", resource(t, "camunda/invalidPrioProcess.bpmn20.xml"), []string{"invalidPrioProcess.bpmn20.xml", `"task2"`, "camunda:jobPriority", `"thisIsNotANumber"`}},
		{"malformed", deployment.Resource{Name: "broken.bpmn", Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"><process id="p">`)}, []string{"broken.bpmn", "well-formed"}},
		{"expression", resource(t, "flowable/FailedJobRetryCmdTest.testTimeCycleVariable.bpmn20.xml"), []string{`"failingServiceTask"`, "flowable:failedJobRetryTimeCycle", `"${myVariable}"`}},
		{"duplicate key", deployment.Resource{Name: "again.bpmn", Content: good.Content}, []string{"again.bpmn", `"jobPrioProcess"`, "duplicate process key"}},
		{"cycle too long", deployment.Resource{Name: "long.bpmn", Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"><process id="long"><task id="t" camunda:asyncBefore="true"><extensionElements><camunda:failedJobRetryTimeCycle>R99999999/PT1S</camunda:failedJobRetryTimeCycle></extensionElements></task></process></definitions>`)}, []string{"long.bpmn", `"t"`, "R99999999/PT1S", "max_attempts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := handle.Create(ctx, deployment.CreateParams{Name: "bad", Resources: []deployment.Resource{good, tc.bad}})
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			page, err := handle.List(ctx, deployment.ListParams{})
			require.NoError(t, err)
			require.Empty(t, page.Deployments, "nothing deployed")
		})
	}
}

// TestGoDeclarationsMix: definitions declared in Go keep working beside
// deployed ones; a model that defines a declared process or activity
// differently is refused, naming both.
func TestGoDeclarationsMix(t *testing.T) {
	ctx := context.Background()
	config := workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "jobPrioProcess"}, {Key: "coded"}},
		JobDefinitions:     []workflow.JobDefinition{{ID: "coded-task", ProcessDefinitionKey: "coded", ActivityID: "t", Kind: "deployment_task", RetryCycle: "R2/PT1S"}},
	}
	f := setup(t, config)
	_, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	var be *bpmn.Error
	require.ErrorAs(t, err, &be)
	require.Equal(t, "jobPrioProcess", be.ElementID)
	require.ErrorContains(t, err, "declared in Go")

	coded := func(cycle string) deployment.Resource {
		return deployment.Resource{Name: "coded.bpmn", Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"><process id="coded"><task id="t" camunda:asyncBefore="true"><extensionElements><camunda:failedJobRetryTimeCycle>` + cycle + `</camunda:failedJobRetryTimeCycle></extensionElements></task></process></definitions>`)}
	}
	_, err = f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{coded("R3/PT1S")}})
	require.ErrorContains(t, err, `job definition "coded-task"`)
	require.ErrorContains(t, err, `"R2/PT1S"`)
	// The same definition in both is allowed.
	_, err = f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{coded("R2/PT1S")}})
	require.NoError(t, err)

	// The Go one still resolves by its id, the deployed one by its alias.
	res, err := f.client.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "coded-task"}.InsertOpts())
	require.NoError(t, err)
	require.Equal(t, "coded-task", jobContext(t, res.Job).JobDefinitionID)
	require.Empty(t, jobContext(t, res.Job).DeploymentID)
	res, err = f.client.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: "coded:t:async-before"}.InsertOpts())
	require.NoError(t, err)
	require.Equal(t, "coded:1:t:async-before", jobContext(t, res.Job).JobDefinitionID)
}

// TestDeploymentAwareAcquisition: a deployment made through an engine is
// registered with its deployment-aware drivers, whose clients then fetch
// its jobs (and not another deployment's).
func TestDeploymentAwareAcquisition(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	driver, err := f.engine.NewDriver(workflow.Acquisition{DeploymentAware: true})
	require.NoError(t, err)
	dep, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	require.NoError(t, err)
	require.Equal(t, []string{dep.ID}, driver.RegisteredDeployments())

	// A deployment made elsewhere (another engine) is not registered here.
	other, err := workflow.NewEngine(f.pool, &workflow.Config{Schema: f.schema})
	require.NoError(t, err)
	elsewhere, err := other.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "flowable/FailedJobRetryCmdTest.testFailedServiceTask.bpmn20.xml")}})
	require.NoError(t, err)
	require.Equal(t, []string{dep.ID}, driver.RegisteredDeployments())

	mine := f.insert(t, "jobPrioProcess:task1:async-before", taskArgs{})
	theirs := f.insert(t, "failedServiceTask:failingServiceTask:async-before", taskArgs{})
	require.Equal(t, elsewhere.ID, jobContext(t, theirs).DeploymentID)

	events := f.worker(t, driver, 2, river.EventKindJobCompleted)
	select {
	case ev := <-events:
		require.Equal(t, mine.ID, ev.Job.ID)
	case <-time.After(time.Minute):
		t.Fatal("the registered deployment's job did not run within a minute")
	}
	// The other deployment's job is still waiting after several polls.
	time.Sleep(500 * time.Millisecond)
	job, err := f.client.JobGet(ctx, theirs.ID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, job.State)
}

// TestGoDeclarationOfADeployedID: a Go declaration never overwrites a job
// definition read from a model: storing it fails, naming the deployment.
func TestGoDeclarationOfADeployedID(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	dep, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	require.NoError(t, err)
	coded, err := workflow.NewEngine(f.pool, &workflow.Config{
		Schema:             f.schema,
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "jobPrioProcess"}},
		JobDefinitions:     []workflow.JobDefinition{{ID: "jobPrioProcess:1:task1:async-before", ProcessDefinitionKey: "jobPrioProcess", ActivityID: "task1", Kind: "deployment_task"}},
	})
	require.NoError(t, err)
	err = coded.SyncJobDefinitions(ctx)
	var defErr *workflow.DefinitionError
	require.ErrorAs(t, err, &defErr)
	require.ErrorContains(t, err, "deployment "+dep.ID)
	got, err := f.engine.Deployments().Get(ctx, dep.ID)
	require.NoError(t, err)
	for _, jd := range got.ProcessDefinitions[0].JobDefinitions {
		if jd.ID == "jobPrioProcess:1:task1:async-before" {
			require.Equal(t, "async-before", jd.Configuration, "the deployed row is intact")
			require.Equal(t, "task1", jd.ActivityID)
		}
	}
}

// TestRunsByDeployedPriority: a client acquiring by priority runs the job
// of Camunda's task1 (the process's 10) before the one of task2 (the
// activity's 5), though task2's was inserted first; and suspending the
// deployed process definition holds its new jobs.
func TestRunsByDeployedPriority(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	_, err := f.engine.Deployments().Create(ctx, deployment.CreateParams{Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
	require.NoError(t, err)
	insert := func(jobDef, instance string) *rivertype.JobRow {
		res, err := f.client.Insert(ctx, taskArgs{}, workflow.JobContext{JobDefinitionID: jobDef, ProcessInstanceID: instance}.InsertOpts())
		require.NoError(t, err)
		return res.Job
	}
	low := insert("jobPrioProcess:task2:async-before", "pi-low")
	high := insert("jobPrioProcess:task1:async-before", "pi-high")

	driver, err := f.engine.NewDriver(workflow.Acquisition{ByPriority: true})
	require.NoError(t, err)
	events := f.worker(t, driver, 1, river.EventKindJobCompleted)
	var order []int64
	for len(order) < 2 {
		select {
		case ev := <-events:
			order = append(order, ev.Job.ID)
		case <-time.After(time.Minute):
			t.Fatalf("the jobs did not run within a minute (%v)", order)
		}
	}
	// Completion events may come in one batch, in any order: the order of
	// the runs is their start times.
	highRun, err := f.client.JobGet(ctx, high.ID)
	require.NoError(t, err)
	lowRun, err := f.client.JobGet(ctx, low.ID)
	require.NoError(t, err)
	require.True(t, highRun.AttemptedAt.Before(*lowRun.AttemptedAt), "priority 10 started first (%v), then 5 (%v), one worker", highRun.AttemptedAt, lowRun.AttemptedAt)

	_, err = f.engine.SuspendProcessDefinition(ctx, "jobPrioProcess", nil)
	require.NoError(t, err)
	held := insert("jobPrioProcess:task1:async-after", "pi-held")
	require.Equal(t, rivertype.JobStatePending, held.State, "a suspended process definition's new job is held")
}

// TestConcurrentCreates: deployments of one key made at once, from several
// engines (as from several processes), get consecutive versions, each once.
func TestConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	f := setup(t, workflow.Config{})
	const n = 8
	errs := make(chan error, n)
	versions := make(chan int, n)
	for i := range n {
		go func() {
			engine, err := workflow.NewEngine(f.pool, &workflow.Config{Schema: f.schema})
			if err != nil {
				errs <- err
				return
			}
			dep, err := engine.Deployments().Create(ctx, deployment.CreateParams{Name: "race", Resources: []deployment.Resource{{
				Name: "race.bpmn",
				Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
<process id="race" camunda:jobPriority="` + strings.Repeat("1", i+1) + `"><task id="t" camunda:asyncBefore="true"/></process></definitions>`),
			}}})
			if err != nil {
				errs <- err
				return
			}
			versions <- dep.ProcessDefinitions[0].Version
			errs <- nil
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	close(versions)
	seen := map[int]bool{}
	for v := range versions {
		require.False(t, seen[v], "version %d given twice", v)
		seen[v] = true
	}
	for v := 1; v <= n; v++ {
		require.True(t, seen[v], "version %d missing: %v", v, seen)
	}

	// The same resources deployed at once: one deployment, the others its
	// duplicates (the duplicate filter runs under the deployment lock).
	results := make(chan *deployment.Deployment, n)
	for range n {
		go func() {
			engine, err := workflow.NewEngine(f.pool, &workflow.Config{Schema: f.schema})
			if err != nil {
				errs <- err
				return
			}
			dep, err := engine.Deployments().Create(ctx, deployment.CreateParams{Name: "same", Resources: []deployment.Resource{resource(t, "camunda/jobPrioProcess.bpmn20.xml")}})
			if err != nil {
				errs <- err
				return
			}
			results <- dep
			errs <- nil
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	close(results)
	created, ids := 0, map[string]bool{}
	for dep := range results {
		if !dep.Duplicate {
			created++
		}
		ids[dep.ID] = true
	}
	require.Equal(t, 1, created, "one deployment made")
	require.Len(t, ids, 1, "the duplicates name it")
}
