package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
	"github.com/riverbpmn/riverbpmn/priority"
)

// modelJob is a job of the composition model test: its row, and what the
// fetch should make of it, written down independently of the SQL.
type modelJob struct {
	id        int64
	metadata  string
	prio      int64 // the int64 priority the fetch orders by (0 when corrupt)
	timer     bool
	due       time.Time
	riverPrio int
	dep       string                     // "" = no deployment
	keys      map[exclusive.Scope]string // "" = no key
}

// modelJobs builds the jobs of one client's queue: 8 process instances (two
// of them sub-instances of others) of 5 jobs each with random priorities,
// timers, due dates, River priorities and deployments, some non-exclusive;
// jobs of no instance; plain River jobs; and rows with corrupt job contexts
// written as raw SQL would write them.
func modelJobs(rng *rand.Rand, prefix string, base time.Time) []*modelJob {
	var jobs []*modelJob
	deps := []string{"d1", "d2", "d3", ""}
	randomJob := func() *modelJob {
		return &modelJob{
			prio:      int64(rng.IntN(17) - 3), // -3 .. 13, across the range [0, 10]
			timer:     rng.IntN(4) == 0,
			due:       base.Add(-time.Duration(rng.IntN(61)) * time.Minute),
			riverPrio: 1 + rng.IntN(4),
			keys:      map[exclusive.Scope]string{},
		}
	}
	for k := range 8 {
		instance := fmt.Sprintf("%sinst-%d", prefix, k)
		root := instance
		if k == 1 || k == 3 {
			root = fmt.Sprintf("%sinst-%d", prefix, k-1)
		}
		for range 5 {
			job := randomJob()
			job.dep = deps[k%len(deps)]
			isExclusive := rng.IntN(8) != 0
			jc := map[string]any{"process_instance_id": instance, "process_definition_key": "p", "exclusive": isExclusive, "priority": job.prio}
			if root != instance {
				jc["root_process_instance_id"] = root
			}
			if job.timer {
				jc["job_type"] = JobTypeTimer
			}
			if job.dep != "" {
				jc["deployment_id"] = job.dep
			}
			if isExclusive {
				job.keys[exclusive.ProcessInstance], job.keys[exclusive.RootProcessInstance] = instance, root
			}
			job.metadata = storedForm(rng, jc)
			jobs = append(jobs, job)
		}
	}
	for i := range 6 { // no process instance: never a key
		job := randomJob()
		job.dep = deps[i%len(deps)]
		jc := map[string]any{"process_definition_key": "p", "exclusive": true, "priority": job.prio}
		if job.timer {
			jc["job_type"] = JobTypeTimer
		}
		if job.dep != "" {
			jc["deployment_id"] = job.dep
		}
		job.metadata = storedForm(rng, jc)
		jobs = append(jobs, job)
	}
	for range 3 { // plain River jobs
		job := randomJob()
		job.prio, job.timer, job.metadata = 0, false, `{}`
		jobs = append(jobs, job)
	}
	// Corrupt contexts: the fetch reads each field on its own (priority 0,
	// not a timer, no deployment when the field is bad), and a key only from
	// a string instance id (ExclusiveKeyOf).
	corrupt := []struct {
		metadata      string
		prio          int64
		dep, pi, root string
	}{
		{`{"bpmn": {"process_instance_id": "%[1]sinst-0", "exclusive": true, "priority": "high", "deployment_id": "d1"}}`, 0, "d1", "inst-0", "inst-0"},
		{`{"bpmn": {"process_instance_id": 42, "exclusive": true, "priority": 3}}`, 3, "", "", ""},
		{`{"bpmn": {"process_instance_id": {"a": 1}, "exclusive": true}}`, 0, "", "", ""},
		{`{"bpmn": {"process_instance_id": "%[1]sinst-2", "root_process_instance_id": 7, "exclusive": true, "priority": 4}}`, 4, "", "inst-2", ""},
		{`{"bpmn": "oops"}`, 0, "", "", ""},
		{`[1, 2]`, 0, "", "", ""},
		{`{"bpmn": {"exclusive": "true", "process_instance_id": "%[1]sinst-1", "priority": 2}}`, 2, "", "", ""},
		{`{"bpmn": {"deployment_id": 42, "priority": 5, "job_type": ["timer"]}}`, 5, "", "", ""},
		{`{"bpmn": {"priority": 1e30, "process_instance_id": "%[1]sinst-3", "exclusive": true, "deployment_id": "d2"}}`, 0, "d2", "inst-3", "inst-3"},
		// The same in the compact form, and garbage only an array can be
		// (no process definition: the fair model leaves them without tenant).
		{`{"bpmn": ["%[1]sinst-0", null, null, null, "high", true, "d1"]}`, 0, "d1", "inst-0", "inst-0"},
		{`{"bpmn": [42, null, null, null, 3, true]}`, 3, "", "", ""},
		{`{"bpmn": [{"a": 1}, null, null, null, null, true]}`, 0, "", "", ""},
		{`{"bpmn": ["%[1]sinst-2", null, null, null, 4, true, null, null, null, null, 7]}`, 4, "", "inst-2", ""},
		{`{"bpmn": ["%[1]sinst-1", null, null, null, 2, "true"]}`, 2, "", "", ""},
		{`{"bpmn": [null, null, null, null, 5, null, 42, ["timer"]]}`, 5, "", "", ""},
		{`{"bpmn": ["%[1]sinst-3", null, null, null, 1e30, true, "d2"]}`, 0, "d2", "inst-3", "inst-3"},
		{`{"bpmn": ["%[1]sinst-1", null, null, null, 6, true, "d3", "async", null, null, null, "extra", 9]}`, 6, "d3", "inst-1", "inst-1"},
		{`{"bpmn": [["%[1]sinst-0"], "p", null, null, 7, true]}`, 7, "", "", ""},
		{`{"bpmn": [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]}`, 7, "", "", ""},
		{`{"bpmn": []}`, 0, "", "", ""},
		{`{"bpmn": "%[1]sinst-0"}`, 0, "", "", ""},
		{`{"bpmn": 17}`, 0, "", "", ""},
	}
	for _, c := range corrupt {
		job := randomJob()
		job.metadata = strings.ReplaceAll(c.metadata, "%[1]s", prefix)
		job.prio, job.timer, job.dep = c.prio, false, c.dep
		if c.pi != "" {
			job.keys[exclusive.ProcessInstance] = prefix + c.pi
		}
		if c.root != "" {
			job.keys[exclusive.RootProcessInstance] = prefix + c.root
		}
		jobs = append(jobs, job)
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	return jobs
}

// storedForm returns the metadata of a job context given as a map of its
// fields, in either stored form, at random: the object form of migrations
// before riverbpmn/016 or the compact form (an array by compactFields).
func storedForm(rng *rand.Rand, jc map[string]any) string {
	if rng.IntN(2) == 0 {
		return mustMarshal(map[string]any{"bpmn": jc})
	}
	return mustMarshal(map[string]any{"bpmn": compactForm(jc)})
}

// compactFields are the JSON names of the job context's fields by position
// in the compact form (jobctx.Names), for the tests that build contexts by
// position.
var compactFields = jobctx.Names

// compactForm returns the compact form of a job context given as a map.
func compactForm(jc map[string]any) []any {
	values := make([]any, len(compactFields))
	for i, name := range compactFields {
		values[i] = jc[name]
	}
	for len(values) > 0 && values[len(values)-1] == nil {
		values = values[:len(values)-1]
	}
	return values
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// modelAdmits says whether a client with acq may take job.
func modelAdmits(acq Acquisition, job *modelJob) bool {
	if r := acq.PriorityRange; r != nil && (job.prio < r.Min || job.prio > r.Max) {
		return false
	}
	return !acq.DeploymentAware || job.dep == "" || slices.Contains(acq.Deployments, job.dep)
}

// modelCompare orders two jobs as a client with acq does.
func modelCompare(acq Acquisition, a, b *modelJob) int {
	boolDesc := func(x, y bool) int {
		switch {
		case x == y:
			return 0
		case x:
			return -1
		default:
			return 1
		}
	}
	var c int
	if acq.ByPriority {
		c = cmp.Or(c, cmp.Compare(b.prio, a.prio))
	}
	if acq.TimersFirst {
		c = cmp.Or(c, boolDesc(a.timer, b.timer))
	}
	if acq.ByDueDate {
		c = cmp.Or(c, a.due.Compare(b.due))
	}
	return cmp.Or(c, cmp.Compare(a.riverPrio, b.riverPrio), a.due.Compare(b.due), cmp.Compare(a.id, b.id))
}

// modelFetch is what one fetch of up to limit jobs should lock, when no key
// is held: the admitted waiting jobs in the client's order, keeping a job
// with a key only if it is the first admitted waiting job of its key.
func modelFetch(acq Acquisition, scope exclusive.Scope, waiting []*modelJob, limit int) []int64 {
	var admitted []*modelJob
	for _, job := range waiting {
		if modelAdmits(acq, job) {
			admitted = append(admitted, job)
		}
	}
	slices.SortFunc(admitted, func(a, b *modelJob) int { return modelCompare(acq, a, b) })
	var ids []int64
	seenKey := map[string]bool{}
	for _, job := range admitted {
		if len(ids) == limit {
			break
		}
		if key := job.keys[scope]; key != "" {
			if seenKey[key] {
				continue
			}
			seenKey[key] = true
		}
		ids = append(ids, job.id)
	}
	return ids
}

// TestFetchComposesModel runs every combination of acquisition options under
// every exclusive scope (3 x 24 clients, each on a queue of its own) against
// a model written in Go: each fetch must lock exactly the jobs the model
// picks (across keys in the client's order; of each key only its head, the
// first waiting job in the client's order among the jobs the client may
// take), jobs with corrupt contexts included; fetched jobs are then
// completed and the next fetch follows, until the queue has nothing left
// for the client. Jobs the client may not take are never fetched.
// `make test` checks each combination under one scope in turn
// (inShortSample), `make test-long` under every scope.
func TestFetchComposesModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	combos := acquisitionCombinations(priority.Range{Min: 0, Max: 10}, []string{"d1", "d2"})

	for si, scope := range allScopes {
		t.Run(scopeName(scope), func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: scope})
			ident := pgx.Identifier{schema}.Sanitize()
			for ci, acq := range combos {
				if !inShortSample(ci, si, len(allScopes)) {
					continue
				}
				queue := fmt.Sprintf("q%d", ci)
				rng := rand.New(rand.NewPCG(uint64(ci), uint64(scope))) //nolint:gosec // reproducible test data
				jobs := modelJobs(rng, fmt.Sprintf("c%d-", ci), base)
				for _, job := range jobs {
					require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`
						INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
						VALUES ('{}', 'compose_test', 25, $1, $2, $3, 'available', $4) RETURNING id`, ident),
						job.metadata, job.riverPrio, queue, job.due).Scan(&job.id))
				}

				driver := testDriver(t, engine, acq)
				p := newPilot(driver)
				now := base.Add(time.Minute)
				waiting := slices.Clone(jobs)
				for round := 0; ; round++ {
					require.Less(t, round, 200, "%s: the fetches do not drain the queue", acquisitionName(acq))
					limit := 1 + rng.IntN(5)
					want := modelFetch(acq, scope, waiting, limit)
					res, err := p.JobGetAvailable(ctx, driver.GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
						ClientID: "model", MaxAttemptedBy: 10, MaxToLock: limit, Now: &now, Queue: queue, Schema: schema,
					})
					require.NoError(t, err)
					got := jobIDs(res.Jobs)
					require.ElementsMatch(t, want, got, "%s, round %d (limit %d)", acquisitionName(acq), round, limit)
					if len(got) == 0 {
						break
					}
					_, err = engine.dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`, ident), got)
					require.NoError(t, err)
					waiting = slices.DeleteFunc(waiting, func(job *modelJob) bool { return slices.Contains(got, job.id) })
				}
				for _, job := range waiting {
					require.False(t, modelAdmits(acq, job), "%s: job %d (%s) left behind", acquisitionName(acq), job.id, job.metadata)
				}
			}
		})
	}
}

// TestExclusiveKeyOfAgreesWithSQL writes valid and corrupt job contexts as
// raw SQL would and checks, under both scopes, that the key the fetch's SQL
// computes (as ExclusiveWait reports it), ExclusiveKeyOf and, for rows that
// JobContextOf accepts, exclusive.Key of the context all agree, with the
// documented choice for corrupt rows: no key unless the instance id is a
// string; a string instance id keeps its key whatever else is corrupt.
func TestExclusiveKeyOfAgreesWithSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := []struct {
		metadata         string
		wantPI, wantRoot string
		goAccepts        bool
	}{
		{`{"bpmn": {"process_instance_id": "42", "process_definition_key": "p", "exclusive": true}}`, "42", "42", true},
		{`{"bpmn": {"process_instance_id": "sub", "root_process_instance_id": "top", "process_definition_key": "p", "exclusive": true}}`, "sub", "top", true},
		{`{"bpmn": {"process_instance_id": "sub", "root_process_instance_id": null, "process_definition_key": "p", "exclusive": true}}`, "sub", "sub", true},
		{`{"bpmn": {"process_instance_id": "sub", "root_process_instance_id": "", "process_definition_key": "p", "exclusive": true}}`, "sub", "sub", true},
		{`{"bpmn": {"process_instance_id": "pi", "process_definition_key": "p", "exclusive": false}}`, "", "", true},
		{`{"bpmn": {"process_instance_id": "", "process_definition_key": "p", "exclusive": true}}`, "", "", true},
		{`{"bpmn": {"process_definition_key": "p", "exclusive": true}}`, "", "", true},
		{`{}`, "", "", false},
		// Corrupt: a number or an object where the instance id belongs takes
		// no key (so the numeric 42 never holds back the jobs of instance "42").
		{`{"bpmn": {"process_instance_id": 42, "process_definition_key": "p", "exclusive": true}}`, "", "", false},
		{`{"bpmn": {"process_instance_id": {"id": "42"}, "process_definition_key": "p", "exclusive": true}}`, "", "", false},
		{`{"bpmn": {"process_instance_id": ["42"], "exclusive": true}}`, "", "", false},
		{`{"bpmn": {"process_instance_id": "42", "exclusive": "true"}}`, "", "", false},
		{`{"bpmn": {"process_instance_id": "42", "exclusive": 1}}`, "", "", false},
		{`{"bpmn": {"root_process_instance_id": "top", "exclusive": true}}`, "", "", false},
		// Corrupt root: no key with the root scope, the instance's with the
		// instance scope.
		{`{"bpmn": {"process_instance_id": "sub", "root_process_instance_id": 7, "exclusive": true}}`, "sub", "", false},
		// Corrupt elsewhere: the key stays, in sequence with the instance.
		{`{"bpmn": {"process_instance_id": "42", "process_definition_key": "p", "exclusive": true, "priority": "high"}}`, "42", "42", false},
		{`{"bpmn": {"process_instance_id": "42", "process_definition_key": {"k": 1}, "exclusive": true, "deployment_id": 9}}`, "42", "42", false},
		{`{"bpmn": "oops"}`, "", "", false},
		{`{"bpmn": null}`, "", "", false},
		{`[1, 2]`, "", "", false},
		{`"bpmn"`, "", "", false},
		// The compact form, valid and corrupt.
		{`{"bpmn": ["42", "p", null, null, null, true]}`, "42", "42", true},
		{`{"bpmn": ["sub", "p", null, null, null, true, null, null, null, null, "top"]}`, "sub", "top", true},
		{`{"bpmn": ["sub", "p", null, null, null, true, null, null, null, null, null]}`, "sub", "sub", true},
		{`{"bpmn": ["pi", "p", null, null, null, false]}`, "", "", true},
		{`{"bpmn": [null, "p", null, null, null, true]}`, "", "", true},
		{`{"bpmn": [42, "p", null, null, null, true]}`, "", "", false},
		{`{"bpmn": [["42"], "p", null, null, null, true]}`, "", "", false},
		{`{"bpmn": ["42", "p", null, null, null, "true"]}`, "", "", false},
		{`{"bpmn": ["42", "p", null, null, "high", true]}`, "42", "42", false},
		{`{"bpmn": ["sub", "p", null, null, null, true, null, null, null, null, 7]}`, "sub", "", false},
		{`{"bpmn": ["42", "p", null, null, null, true, null, null, null, null, null, "caller"]}`, "42", "42", true},
		// Rewritten to the labelled form on insert (migration 028), the
		// elements past the known fields left out.
		{`{"bpmn": ["42", "p", null, null, null, true, null, null, null, null, null, "caller", "extra"]}`, "42", "42", true},
		{`{"bpmn": []}`, "", "", false},
		// The labelled form, valid and corrupt: exclusive by default with an
		// instance.
		{`{"bpmn": {"instance": "42", "process": "p"}}`, "42", "42", true},
		{`{"bpmn": {"instance": "sub", "process": "p", "root": "top"}}`, "sub", "top", true},
		{`{"bpmn": {"instance": "42", "process": "p", "exclusive": false}}`, "", "", true},
		{`{"bpmn": {"instance": "42", "process": "p", "exclusive": "yes"}}`, "", "", false},
		{`{"bpmn": {"instance": 42, "process": "p"}}`, "", "", false},
		{`{"bpmn": {"instance": "sub", "process": "p", "root": 7}}`, "sub", "", false},
		{`{"bpmn": {"instance": "42", "process": "p", "priority": "high"}}`, "42", "42", false},
		{`{"bpmn": {"process": "p", "exclusive": true}}`, "", "", true},
		{`{"bpmn": "42"}`, "", "", false},
		{`{"bpmn": 42}`, "", "", false},
	}
	for _, scope := range []exclusive.Scope{exclusive.ProcessInstance, exclusive.RootProcessInstance} {
		t.Run(scopeName(scope), func(t *testing.T) {
			t.Parallel()
			engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: scope})
			for _, row := range rows {
				var id int64
				require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`
					INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
					VALUES ('{}', 'k', 25, $1, 1, 'default', 'available', now()) RETURNING id`, pgx.Identifier{schema}.Sanitize()),
					row.metadata).Scan(&id))
				job, err := engine.Driver().GetExecutor().JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id, Schema: schema})
				require.NoError(t, err)

				want := map[exclusive.Scope]string{exclusive.ProcessInstance: row.wantPI, exclusive.RootProcessInstance: row.wantRoot}[scope]
				wait, err := engine.ExclusiveWait(ctx, id)
				require.NoError(t, err)
				require.Equal(t, want, wait.Key, "SQL key of %s", row.metadata)
				goKey, ok := ExclusiveKeyOf(job, scope)
				require.Equal(t, want, goKey, "ExclusiveKeyOf of %s", row.metadata)
				require.Equal(t, want != "", ok)

				jc, err := JobContextOf(job)
				if !row.goAccepts {
					require.Error(t, err, "JobContextOf accepts %s", row.metadata)
					continue
				}
				require.NoError(t, err, row.metadata)
				key, _ := exclusive.Key(scope, jc.Exclusive != nil && *jc.Exclusive, jc.ProcessInstanceID, jc.RootProcessInstanceID)
				require.Equal(t, want, key, "exclusive.Key of JobContextOf(%s)", row.metadata)
			}
		})
	}
}

// TestExclusiveDifferentHeads: two clients with different filters see
// different heads of one key. Instance pi has three waiting jobs: p15 (of
// deployment d1), p8 (d2) and p3 (d1). Client A (by priority, range [0, 10],
// deployment d1) may take only p3; client B (by priority, range [5, 20],
// deployments d1 and d2) may take p15 and p8; client C works another queue,
// which holds a fourth job of pi, in River's order. Each client's head is
// the first job of pi it may take, so pi's jobs run in an order no single
// client's order gives (p3, p15, C's job, p8 here); exclusivity stays
// absolute across the three: while one of them holds pi, the others fetch
// nothing of it.
func TestExclusiveDifferentHeads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{ExclusiveScope: exclusive.ProcessInstance})
	ident := pgx.Identifier{schema}.Sanitize()
	insert := func(queue string, prio int64, dep string) int64 {
		var id int64
		require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`
			INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
			VALUES ('{}', 'k', 25, $1, 1, $2, 'available', now() - interval '1 minute') RETURNING id`, ident),
			mustMarshal(map[string]any{"bpmn": map[string]any{
				"process_instance_id": "pi", "process_definition_key": "p", "exclusive": true, "priority": prio, "deployment_id": dep,
			}}), queue).Scan(&id))
		return id
	}
	p15, p8, p3 := insert("default", 15, "d1"), insert("default", 8, "d2"), insert("default", 3, "d1")
	other := insert("other", 0, "d1")

	type client struct {
		name   string
		driver *Driver
		queue  string
	}
	a := client{"A", testDriver(t, engine, Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 0, Max: 10},
		DeploymentAware: true, Deployments: []string{"d1"}}), "default"}
	b := client{"B", testDriver(t, engine, Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 5, Max: 20},
		DeploymentAware: true, Deployments: []string{"d1", "d2"}}), "default"}
	c := client{"C", engine.Driver(), "other"}
	fetch := func(cl client) []int64 {
		res, err := newPilot(cl.driver).JobGetAvailable(ctx, cl.driver.GetExecutor(), nil, &riverdriver.JobGetAvailableParams{
			ClientID: cl.name, MaxAttemptedBy: 10, MaxToLock: 10, Queue: cl.queue, Schema: schema,
		})
		require.NoError(t, err)
		return jobIDs(res.Jobs)
	}
	finish := func(id int64) { // the job's outcome is written: its lock is stale
		_, err := engine.dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, ident), id)
		require.NoError(t, err)
	}

	require.Equal(t, []int64{p3}, fetch(a), "A's head of pi: p3, the only job of pi it may take")
	require.Empty(t, fetch(b), "B's head of pi is p15, but A holds pi")
	require.Empty(t, fetch(c), "C, on another queue with other options, waits for pi too")
	finish(p3)
	require.Equal(t, []int64{p15}, fetch(b), "B's head: p15")
	require.Empty(t, fetch(a), "nothing of pi is left that A may take")
	require.Empty(t, fetch(c))
	finish(p15)
	require.Equal(t, []int64{other}, fetch(c))
	require.Empty(t, fetch(b), "C holds pi")
	finish(other)
	require.Equal(t, []int64{p8}, fetch(b))
	finish(p8)
	require.Empty(t, fetch(a))
	require.Empty(t, fetch(b))
}
