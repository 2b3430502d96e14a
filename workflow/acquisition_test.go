package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/priority"
)

// acqJob is a job for acquisition tests, written straight into river_job as
// available. name goes into the args so fetch order can be read by name.
type acqJob struct {
	name       string
	priority   *int64
	timer      bool
	deployment string
	dueMinutes int    // scheduled_at = base + dueMinutes
	metadata   string // raw metadata, instead of a job context built from the fields above
	kind       string
}

var acqBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func insertAcqJobs(ctx context.Context, t *testing.T, engine *Engine, jobs ...acqJob) {
	t.Helper()
	for _, job := range jobs {
		metadata := job.metadata
		if metadata == "" {
			jc := map[string]any{"process_definition_key": "p"}
			if job.priority != nil {
				jc["priority"] = *job.priority
			}
			if job.timer {
				jc["job_type"] = JobTypeTimer
			} else {
				jc["job_type"] = JobTypeAsync
			}
			if job.deployment != "" {
				jc["deployment_id"] = job.deployment
			}
			b, err := json.Marshal(map[string]any{"bpmn": jc})
			require.NoError(t, err)
			metadata = string(b)
		}
		kind := job.kind
		if kind == "" {
			kind = "acq"
		}
		_, err := engine.dbPool.Exec(ctx, fmt.Sprintf(`
			INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
			VALUES (jsonb_build_object('name', $1::text), $2, 25, $3, 1, 'default', 'available', $4)`,
			pgx.Identifier{engine.config.Schema}.Sanitize()), job.name, kind, metadata, acqBase.Add(time.Duration(job.dueMinutes)*time.Minute))
		require.NoError(t, err)
	}
}

// fetchSequence fetches one job at a time through a pilot of driver until
// nothing is left, and returns the names in acquisition order.
func fetchSequence(ctx context.Context, t *testing.T, driver *Driver, schema string) []string {
	t.Helper()
	p := newPilot(driver)
	now := acqBase.Add(24 * time.Hour)
	var names []string
	for range 1000 {
		res, err := p.JobGetAvailable(ctx, driver.GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
			ClientID: "acq", MaxAttemptedBy: 10, MaxToLock: 1, Now: &now, Queue: "default", Schema: schema,
		})
		require.NoError(t, err)
		if len(res.Jobs) == 0 {
			return names
		}
		var args struct{ Name string }
		require.NoError(t, json.Unmarshal(res.Jobs[0].EncodedArgs, &args))
		names = append(names, args.Name)
	}
	require.FailNow(t, "fetch did not drain")
	return nil
}

func testDriver(t *testing.T, engine *Engine, acq Acquisition) *Driver {
	t.Helper()
	driver, err := engine.NewDriver(acq)
	require.NoError(t, err)
	return driver
}

func TestAcquisitionOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Priorities 5, 1, 9 and -2 (two of them timers), due dates shuffled.
	jobs := []acqJob{
		{name: "p5-async-due3", priority: ptr(int64(5)), dueMinutes: 3},
		{name: "p1-timer-due1", priority: ptr(int64(1)), timer: true, dueMinutes: 1},
		{name: "p9-async-due4", priority: ptr(int64(9)), dueMinutes: 4},
		{name: "p5-timer-due5", priority: ptr(int64(5)), timer: true, dueMinutes: 5},
		{name: "p-2-async-due0", priority: ptr(int64(-2)), dueMinutes: 0},
		{name: "p5-async-due2", priority: ptr(int64(5)), dueMinutes: 2},
	}
	cases := []struct {
		name string
		acq  Acquisition
		want []string
	}{
		{"ByPriority", Acquisition{ByPriority: true},
			// Within priority 5, River's order (scheduled_at) breaks the tie.
			[]string{"p9-async-due4", "p5-async-due2", "p5-async-due3", "p5-timer-due5", "p1-timer-due1", "p-2-async-due0"}},
		{"ByDueDateOnly", Acquisition{ByDueDate: true},
			[]string{"p-2-async-due0", "p1-timer-due1", "p5-async-due2", "p5-async-due3", "p9-async-due4", "p5-timer-due5"}},
		{"TimersFirst", Acquisition{TimersFirst: true},
			[]string{"p1-timer-due1", "p5-timer-due5", "p-2-async-due0", "p5-async-due2", "p5-async-due3", "p9-async-due4"}},
		{"PriorityThenDueDate", Acquisition{ByPriority: true, ByDueDate: true},
			[]string{"p9-async-due4", "p5-async-due2", "p5-async-due3", "p5-timer-due5", "p1-timer-due1", "p-2-async-due0"}},
		{"TimersFirstThenDueDate", Acquisition{TimersFirst: true, ByDueDate: true},
			[]string{"p1-timer-due1", "p5-timer-due5", "p-2-async-due0", "p5-async-due2", "p5-async-due3", "p9-async-due4"}},
		{"PriorityThenTimers", Acquisition{ByPriority: true, TimersFirst: true},
			[]string{"p9-async-due4", "p5-timer-due5", "p5-async-due2", "p5-async-due3", "p1-timer-due1", "p-2-async-due0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngine(t)
			insertAcqJobs(ctx, t, engine, jobs...)
			require.Equal(t, tc.want, fetchSequence(ctx, t, testDriver(t, engine, tc.acq), schema))
		})
	}

	t.Run("PriorityThenDueDateBreaksTiesByDueDateNotRiverPriority", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		insertAcqJobs(ctx, t, engine,
			acqJob{name: "late", priority: ptr(int64(1)), dueMinutes: 9},
			acqJob{name: "early", priority: ptr(int64(1)), dueMinutes: 1})
		_, err := engine.dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET priority = 4 WHERE args->>'name' = 'early'`, pgx.Identifier{schema}.Sanitize()))
		require.NoError(t, err)
		require.Equal(t, []string{"early", "late"}, fetchSequence(ctx, t, testDriver(t, engine, Acquisition{ByPriority: true, ByDueDate: true}), schema))
		require.Equal(t, []string{}, append([]string{}, fetchSequence(ctx, t, testDriver(t, engine, Acquisition{}), schema)...))
	})
}

func TestAcquisitionPriorityRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	jobs := []acqJob{
		{name: "min", priority: ptr(int64(math.MinInt64))},
		{name: "-5", priority: ptr(int64(-5))},
		{name: "0", priority: ptr(int64(0))},
		{name: "plain"}, // no priority: counts as 0
		{name: "10", priority: ptr(int64(10))},
		{name: "11", priority: ptr(int64(11))},
		{name: "max", priority: ptr(int64(math.MaxInt64))},
	}
	cases := []struct {
		name  string
		rng   priority.Range
		fetch []string
	}{
		{"Full", priority.Range{Min: math.MinInt64, Max: math.MaxInt64}, []string{"max", "11", "10", "0", "plain", "-5", "min"}},
		{"LowerBand", priority.Range{Min: math.MinInt64, Max: 10}, []string{"10", "0", "plain", "-5", "min"}},
		{"UpperBand", priority.Range{Min: 11, Max: math.MaxInt64}, []string{"max", "11"}},
		{"EmptyBand", priority.Range{Min: 1, Max: 9}, nil},
		{"Negative", priority.Range{Min: -5, Max: -1}, []string{"-5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngine(t)
			insertAcqJobs(ctx, t, engine, jobs...)
			got := fetchSequence(ctx, t, testDriver(t, engine, Acquisition{ByPriority: true, PriorityRange: &tc.rng}), schema)
			require.Equal(t, tc.fetch, got)
		})
	}

	t.Run("ConfigErrors", func(t *testing.T) {
		t.Parallel()
		engine, err := NewEngine(nil, nil)
		require.NoError(t, err)
		_, err = engine.NewDriver(Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 5, Max: 4}})
		require.EqualError(t, err, "workflow: Acquisition.PriorityRange [5, 4]: priority: range min 5 is greater than max 4")
		_, err = engine.NewDriver(Acquisition{PriorityRange: &priority.Range{Min: 0, Max: 4}})
		require.EqualError(t, err, "workflow: Acquisition.PriorityRange [0, 4] applies only when acquiring by priority; set ByPriority")
		_, err = engine.NewDriver(Acquisition{Deployments: []string{"d"}})
		require.ErrorContains(t, err, `Acquisition.Deployments ["d"] are used only with DeploymentAware`)
		_, err = engine.NewDriver(Acquisition{DeploymentAware: true, Deployments: []string{"bad\x01"}})
		require.ErrorContains(t, err, `deployment id "bad\x01" contains control character U+0001`)

		// Every valid acquisition combines with exclusivity.
		exclusiveEngine, err := NewEngine(nil, &Config{ExclusiveScope: exclusive.ProcessInstance})
		require.NoError(t, err)
		_, err = exclusiveEngine.NewDriver(Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true,
			PriorityRange: &priority.Range{Min: 0, Max: 4}, DeploymentAware: true, Deployments: []string{"d"}})
		require.NoError(t, err)
		_, err = exclusiveEngine.NewDriver(Acquisition{PriorityRange: &priority.Range{Min: 0, Max: 4}})
		require.EqualError(t, err, "workflow: Acquisition.PriorityRange [0, 4] applies only when acquiring by priority; set ByPriority")
	})
}

// acqWorkArgs is worked by real clients in the two-client tests.
type acqWorkArgs struct {
	Name     string `json:"name"`
	Priority int64  `json:"priority"`
}

func (acqWorkArgs) Kind() string { return "acq_work" }

type acqOtherArgs struct {
	Name string `json:"name"`
}

func (acqOtherArgs) Kind() string { return "acq_other" }

// TestAcquisitionRangesSplitWorkload: two clients with adjacent ranges work a
// mixed workload; every job is worked once, by the client whose range holds
// its priority.
func TestAcquisitionRangesSplitWorkload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)

	type worked struct {
		client   string
		priority int64
	}
	var (
		mu   sync.Mutex
		seen = map[string][]worked{}
	)
	newClient := func(name string, rng priority.Range) *river.Client[pgx.Tx] {
		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[acqWorkArgs]) error {
			mu.Lock()
			defer mu.Unlock()
			seen[job.Args.Name] = append(seen[job.Args.Name], worked{name, job.Args.Priority})
			return nil
		}))
		client, err := river.NewClient(testDriver(t, engine, Acquisition{ByPriority: true, PriorityRange: &rng}), &river.Config{
			FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 10 * time.Millisecond,
			Middleware: []rivertype.Middleware{engine.Middleware()},
			Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
			Schema:     schema, TestOnly: true, Workers: workers,
		})
		require.NoError(t, err)
		return client
	}
	low := newClient("low", priority.Range{Min: math.MinInt64, Max: 9})
	high := newClient("high", priority.Range{Min: 10, Max: math.MaxInt64})

	const jobCount = 300
	params := make([]river.InsertManyParams, jobCount)
	for i := range params {
		p := int64(i%25 - 5) // -5 .. 19, across both ranges
		name := fmt.Sprintf("job-%d", i)
		params[i] = river.InsertManyParams{
			Args:       acqWorkArgs{Name: name, Priority: p},
			InsertOpts: JobContext{ProcessDefinitionKey: "p", ProcessInstanceID: name, Priority: &p}.InsertOpts(),
		}
	}
	_, err := low.InsertMany(ctx, params)
	require.NoError(t, err)

	for _, c := range []*river.Client[pgx.Tx]{low, high} {
		require.NoError(t, c.Start(ctx))
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == jobCount
	}, 20*time.Second, 10*time.Millisecond)
	for _, c := range []*river.Client[pgx.Tx]{low, high} {
		require.NoError(t, c.Stop(ctx))
	}

	mu.Lock()
	defer mu.Unlock()
	perClient := map[string]int{}
	for name, works := range seen {
		require.Len(t, works, 1, "%s worked once", name)
		w := works[0]
		perClient[w.client]++
		if w.priority >= 10 {
			require.Equal(t, "high", w.client, "%s (priority %d)", name, w.priority)
		} else {
			require.Equal(t, "low", w.client, "%s (priority %d)", name, w.priority)
		}
	}
	require.Equal(t, map[string]int{"low": 180, "high": 120}, perClient)
}

func TestAcquisitionDeployments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("RegisterAndUnregisterAtRunTime", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		driver := testDriver(t, engine, Acquisition{DeploymentAware: true, Deployments: []string{"dep-a"}})
		require.Equal(t, []string{"dep-a"}, driver.RegisteredDeployments())

		insertAcqJobs(ctx, t, engine,
			acqJob{name: "a1", deployment: "dep-a"}, acqJob{name: "b1", deployment: "dep-b"}, acqJob{name: "none1"},
			acqJob{name: "plain1", metadata: `{}`})
		require.Equal(t, []string{"a1", "none1", "plain1"}, fetchSequence(ctx, t, driver, schema), "dep-b is not registered")

		require.NoError(t, driver.RegisterDeployment("dep-b"))
		require.NoError(t, driver.RegisterDeployment("dep-b"), "registering twice is harmless")
		require.Equal(t, []string{"dep-a", "dep-b"}, driver.RegisteredDeployments())
		require.Equal(t, []string{"b1"}, fetchSequence(ctx, t, driver, schema), "registered at run time: fetched at the next fetch")

		removed, err := driver.UnregisterDeployment("dep-b")
		require.NoError(t, err)
		require.True(t, removed)
		removed, err = driver.UnregisterDeployment("dep-b")
		require.NoError(t, err)
		require.False(t, removed)
		insertAcqJobs(ctx, t, engine, acqJob{name: "b2", deployment: "dep-b"}, acqJob{name: "none2"})
		require.Equal(t, []string{"none2"}, fetchSequence(ctx, t, driver, schema), "unregistered again: not fetched; no-deployment jobs always are")

		removed, err = driver.UnregisterDeployment("dep-a")
		require.NoError(t, err)
		require.True(t, removed)
		require.Empty(t, driver.RegisteredDeployments())
		insertAcqJobs(ctx, t, engine, acqJob{name: "a2", deployment: "dep-a"}, acqJob{name: "none3"})
		require.Equal(t, []string{"none3"}, fetchSequence(ctx, t, driver, schema), "no deployment registered: only jobs without one")

		require.ErrorContains(t, driver.RegisterDeployment(""), `deployment id "" is required and must not be empty`)
		require.ErrorIs(t, testDriver(t, engine, Acquisition{}).RegisterDeployment("x"), errNotDeploymentAware)
		_, err = testDriver(t, engine, Acquisition{}).UnregisterDeployment("x")
		require.ErrorIs(t, err, errNotDeploymentAware, "unregistering is refused like registering")
		require.ErrorIs(t, engine.Driver().RegisterDeployment("x"), errNotDeploymentAware, "the engine's stock driver")
		_, err = engine.Driver().UnregisterDeployment("x")
		require.ErrorIs(t, err, errNotDeploymentAware, "the engine's stock driver")
	})

	t.Run("WithPriorityAndRange", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		driver := testDriver(t, engine, Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 0, Max: 100},
			DeploymentAware: true, Deployments: []string{"dep-a"}})
		insertAcqJobs(ctx, t, engine,
			acqJob{name: "a-50", deployment: "dep-a", priority: ptr(int64(50))},
			acqJob{name: "b-60", deployment: "dep-b", priority: ptr(int64(60))},
			acqJob{name: "a-500", deployment: "dep-a", priority: ptr(int64(500))},
			acqJob{name: "none-70", priority: ptr(int64(70))})
		require.Equal(t, []string{"none-70", "a-50"}, fetchSequence(ctx, t, driver, schema))
	})

	// Two clients with different workers and deployments share one queue:
	// each fetches only jobs it has a worker for.
	t.Run("TwoClientsDifferentWorkers", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngine(t)
		var (
			mu     sync.Mutex
			worked = map[string]string{}
		)
		record := func(client, name string) {
			mu.Lock()
			defer mu.Unlock()
			worked[name] += client
		}
		newClient := func(name, deployment string, addWorker func(*river.Workers)) *river.Client[pgx.Tx] {
			workers := river.NewWorkers()
			addWorker(workers)
			client, err := river.NewClient(testDriver(t, engine, Acquisition{DeploymentAware: true, Deployments: []string{deployment}}), &river.Config{
				FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 10 * time.Millisecond,
				Middleware: []rivertype.Middleware{engine.Middleware()},
				Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
				Schema:     schema, TestOnly: true, Workers: workers,
			})
			require.NoError(t, err)
			return client
		}
		clientA := newClient("A", "dep-a", func(w *river.Workers) {
			river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[acqWorkArgs]) error {
				record("A", job.Args.Name)
				return nil
			}))
		})
		clientB := newClient("B", "dep-b", func(w *river.Workers) {
			river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[acqOtherArgs]) error {
				record("B", job.Args.Name)
				return nil
			}))
		})

		var params []river.InsertManyParams
		for i := range 100 {
			params = append(params,
				river.InsertManyParams{Args: acqWorkArgs{Name: fmt.Sprintf("a%d", i)}, InsertOpts: JobContext{ProcessDefinitionKey: "pa", DeploymentID: "dep-a"}.InsertOpts()},
				river.InsertManyParams{Args: acqOtherArgs{Name: fmt.Sprintf("b%d", i)}, InsertOpts: JobContext{ProcessDefinitionKey: "pb", DeploymentID: "dep-b"}.InsertOpts()})
		}
		_, err := newInsertClient(t, engine, schema).InsertMany(ctx, params)
		require.NoError(t, err)
		for _, c := range []*river.Client[pgx.Tx]{clientA, clientB} {
			require.NoError(t, c.Start(ctx))
		}
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(worked) == 200
		}, 20*time.Second, 10*time.Millisecond)
		for _, c := range []*river.Client[pgx.Tx]{clientA, clientB} {
			require.NoError(t, c.Stop(ctx))
		}
		mu.Lock()
		defer mu.Unlock()
		for name, by := range worked {
			require.Equal(t, strings.ToUpper(name[:1]), by, "job %s", name)
		}
		var failed int
		require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_job WHERE state <> 'completed' OR errors IS NOT NULL`,
			pgx.Identifier{schema}.Sanitize())).Scan(&failed))
		require.Zero(t, failed, "no job was fetched by a client without its worker")
	})
}

// TestAcquisitionBadMetadata: jobs whose context holds bad acquisition data
// do not break fetching for the others; they count as priority 0, not a
// timer, no deployment.
func TestAcquisitionBadMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)
	insertAcqJobs(ctx, t, engine,
		acqJob{name: "good-5", priority: ptr(int64(5)), deployment: "dep-a"},
		acqJob{name: "string-priority", metadata: `{"bpmn": {"priority": "high", "deployment_id": "dep-a"}}`},
		acqJob{name: "fraction-priority", metadata: `{"bpmn": {"priority": 2.5}}`},
		acqJob{name: "huge-priority", metadata: `{"bpmn": {"priority": 1e30}}`},
		acqJob{name: "number-deployment", metadata: `{"bpmn": {"priority": 3, "deployment_id": 42}}`},
		acqJob{name: "array-type", metadata: `{"bpmn": {"priority": 4, "job_type": ["timer"]}}`},
		acqJob{name: "bpmn-not-object", metadata: `{"bpmn": "oops"}`},
		acqJob{name: "not-object", metadata: `[1, 2]`},
		acqJob{name: "good-1", priority: ptr(int64(1)), deployment: "dep-b"},
	)
	driver := testDriver(t, engine, Acquisition{ByPriority: true, TimersFirst: true, ByDueDate: true,
		PriorityRange: &priority.Range{Min: 0, Max: 10}, DeploymentAware: true, Deployments: []string{"dep-a"}})
	got := fetchSequence(ctx, t, driver, schema)
	require.Equal(t, []string{"good-5", "array-type", "number-deployment",
		// priority 0, in River's order:
		"string-priority", "fraction-priority", "huge-priority", "bpmn-not-object", "not-object"}, got,
		"good-1 is of unregistered dep-b; the rest still fetch")
}
