package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// insertArrayFormJobs inserts n available exclArgs jobs with the job context
// in the array form of migration riverbpmn/016, as clients of releases
// before migration riverbpmn/028 store it, by raw SQL: job i belongs to
// instance "inst-(i % instances)", is exclusive and has priority i % 7.
func insertArrayFormJobs(ctx context.Context, db *pgxpool.Pool, schema string, first, n, instances int) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
		INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state)
		SELECT jsonb_build_object('instance', 'inst-' || (i %% %[2]d), 'sleep_micros', 1000),
			'excl_test', 25,
			jsonb_build_object('bpmn', jsonb_build_array('inst-' || (i %% %[2]d), 'excl_process', NULL, NULL, i %% 7, true)),
			1, 'default', 'available'
		FROM generate_series($1::bigint, $2::bigint) AS i`,
		pgx.Identifier{schema}.Sanitize(), instances), first, first+n-1)
	return err
}

// TestLabelledJobContextUpgrade upgrades a schema holding jobs in the array
// form to migration 028 while two clients of this release run (they write
// the array until they see the migration) and an inserter of an earlier
// release keeps writing the array across it, then adds jobs through a
// client. Every job runs exactly once; no two jobs of one instance overlap,
// whatever form they were written in; every row ends in the labelled form
// (the migration rewrote those before it, its insert trigger those after);
// the lookups by instance find them all; and the clients write the labelled
// form themselves once they have seen the migration.
func TestLabelledJobContextUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema := emptySchema(t)
	_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: labelledContextVersion - 1})
	require.NoError(t, err)
	sanitized := pgx.Identifier{schema}.Sanitize()

	const instances = 40
	require.NoError(t, insertArrayFormJobs(ctx, pool, schema, 0, 400, instances))

	rec := newExclRecorder(exclusive.ProcessInstance)
	nodes := make([]*exclNode, 2)
	for i := range nodes {
		nodes[i] = newExclNode(t, schema, rec, exclNodeOpts{
			scope: exclusive.ProcessInstance, maxWorkers: 20, poolConns: 6, poll: 50 * time.Millisecond, cooldown: time.Millisecond,
		})
		require.NoError(t, nodes[i].client.Start(ctx))
	}
	require.False(t, nodes[0].engine.labelledContext(ctx), "before the migration the engine writes the array")

	var (
		oldInserted atomic.Int64
		stopOld     = make(chan struct{})
		oldDone     sync.WaitGroup
		oldErr      error
	)
	oldInserted.Store(400)
	oldDone.Go(func() {
		for {
			select {
			case <-stopOld:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if oldErr = insertArrayFormJobs(ctx, pool, schema, int(oldInserted.Load()), 10, instances); oldErr != nil {
				return
			}
			oldInserted.Add(10)
		}
	})

	var before []exclArgs
	for i := range 200 {
		before = append(before, exclArgs{Instance: fmt.Sprintf("inst-%d", i%instances), SleepMicros: 1000})
	}
	insertExcl(ctx, t, nodes[0].client, before)
	var arraysBefore int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_job WHERE jsonb_typeof(metadata -> 'bpmn') = 'array'`,
		sanitized)).Scan(&arraysBefore))
	require.GreaterOrEqual(t, arraysBefore, 200, "the clients write the array before the migration")

	res, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(res.BPMN.Versions, func(v rivermigrate.MigrateVersion) bool { return v.Version == labelledContextVersion }),
		"migrated through %d", labelledContextVersion)
	oldAtMigration := oldInserted.Load()

	var after []exclArgs
	for i := range 200 {
		after = append(after, exclArgs{Instance: fmt.Sprintf("inst-%d", i%instances), SleepMicros: 1000})
	}
	insertExcl(ctx, t, nodes[1].client, after)
	require.Eventually(t, func() bool { return oldInserted.Load() > oldAtMigration+50 }, 10*time.Second, 10*time.Millisecond,
		"array-form jobs are inserted after the migration too")
	close(stopOld)
	oldDone.Wait()
	require.NoError(t, oldErr, "inserting array-form jobs across the migration")

	total := int(oldInserted.Load()) + len(before) + len(after)
	require.Eventually(t, func() bool { return rec.finishedCount.Load() >= int64(total) }, 60*time.Second, 10*time.Millisecond,
		"finished %d of %d", rec.finishedCount.Load(), total)
	for _, node := range nodes {
		require.NoError(t, node.client.Stop(ctx))
	}

	var completed, labelled, earlier int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`
		SELECT count(*) FILTER (WHERE state = 'completed'),
			count(*) FILTER (WHERE jsonb_typeof(metadata -> 'bpmn') = 'object'
				AND NOT %[1]s.river_bpmn_ctx_is_earlier_form(metadata -> 'bpmn')),
			count(*) FILTER (WHERE %[1]s.river_bpmn_ctx_is_earlier_form(metadata -> 'bpmn'))
		FROM %[1]s.river_job`, sanitized)).Scan(&completed, &labelled, &earlier))
	require.Equal(t, total, completed)
	require.Equal(t, total, labelled, "every row in the labelled form")
	require.Zero(t, earlier)
	rec.mu.Lock()
	require.Len(t, rec.finished, total)
	for id, n := range rec.finished {
		require.Equal(t, 1, n, "job %d", id)
	}
	rec.mu.Unlock()
	overlaps := exclusive.Overlaps(rec.timeline.Spans())
	for _, overlap := range overlaps[:min(len(overlaps), 10)] {
		t.Error(overlap)
	}
	require.Empty(t, overlaps, "no two jobs of one instance overlapped, whatever form they were written in")

	// The lookups by instance find every job, read as they were written.
	engine := nodes[0].engine
	jobs, err := engine.ProcessInstanceJobs(ctx, "inst-3")
	require.NoError(t, err)
	var inst3 int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_job WHERE args ->> 'instance' = 'inst-3'`,
		sanitized)).Scan(&inst3))
	require.Len(t, jobs, inst3)
	for _, job := range jobs {
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Equal(t, "inst-3", jc.ProcessInstanceID)
		require.Equal(t, "excl_process", jc.ProcessDefinitionKey)
		require.True(t, *jc.Exclusive)
	}

	// Once it has looked again, an engine writes the labelled form itself.
	engine.contextForm.checkedAt.Store(0)
	require.True(t, engine.labelledContext(ctx))
	fresh := newExclNode(t, schema, rec, exclNodeOpts{scope: exclusive.ProcessInstance, maxWorkers: 1, poolConns: 2})
	require.True(t, fresh.engine.labelledContext(ctx), "an engine that starts on the migrated schema writes the labelled form")
}

// TestLabelledJobContextArrayRewrite: a context an earlier release wrote
// (the array of migration riverbpmn/016, the object before it) is rewritten
// on insert by migration 028's trigger into exactly what this release's
// encoder writes for the same resolved context, so a row reads the same
// whoever inserted it.
func TestLabelledJobContextArrayRewrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngine(t)
	five, minus, zero, yes, no := int64(5), int64(-3), int64(0), true, false
	contexts := []JobContext{
		{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", ActivityID: "a", JobDefinitionID: "p:a", Priority: &five, Exclusive: &yes,
			DeploymentID: "d", JobType: JobTypeAsync, RetryCycle: "R3/PT1S", TenantID: "t"},
		{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", JobDefinitionID: "p:a", Priority: &zero, Exclusive: &no},
		{ProcessInstanceID: "sub", RootProcessInstanceID: "top", ParentProcessInstanceID: "mid", ProcessDefinitionKey: "p",
			ActivityID: "x", JobDefinitionID: "other", Priority: &minus, Exclusive: &yes},
		{ProcessInstanceID: "pi", ProcessDefinitionKey: "p", Exclusive: &yes},
		{ProcessDefinitionKey: "p", Priority: &five, Exclusive: &yes, JobType: JobTypeTimer},
		{Priority: &zero, Exclusive: &no},
	}
	for i, jc := range contexts {
		array, err := jc.addResolvedToMetadata(nil, false)
		require.NoError(t, err)
		want, err := jc.addResolvedToMetadata(nil, true)
		require.NoError(t, err)
		object, err := json.Marshal(map[string]JobContext{MetadataKey: jc.stored()})
		require.NoError(t, err)
		for form, metadata := range map[string][]byte{"array": array, "object": object} {
			if form == "object" && jc.ProcessDefinitionKey == "" {
				continue // json.Marshal writes "process_definition_key": "", which no release stored without an identity
			}
			var stored string
			require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`
				INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state)
				VALUES ('{}', 'k', 25, $1, 1, 'default', 'available') RETURNING metadata::text`, pgx.Identifier{schema}.Sanitize()),
				metadata).Scan(&stored))
			require.JSONEq(t, string(want), stored, "context %d, %s form %s", i, form, metadata)
			got, err := JobContextOf(&rivertype.JobRow{ID: 1, Metadata: []byte(stored)})
			require.NoError(t, err)
			wantRead, err := JobContextOf(&rivertype.JobRow{ID: 1, Metadata: array})
			require.NoError(t, err)
			require.Equal(t, wantRead, got, "context %d, %s form: reads as the array did", i, form)
		}
	}
}

// TestJobContextReadableInRiverUI: what River UI shows of a job (its
// metadata, as River's API returns it) names the job context's fields by
// label, and River's own metadata filter (JobListParams.Metadata,
// containment through River's GIN index on metadata) finds jobs by their
// instance, process and job definition.
func TestJobContextReadableInRiverUI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, schema := testEngineWithConfig(t, &Config{
		ProcessDefinitions: []ProcessDefinition{{Key: "order"}},
		JobDefinitions:     []JobDefinition{{ID: "order:reserve", Kind: shipArgs{}.Kind(), ProcessDefinitionKey: "order", ActivityID: "reserve"}},
	})
	client := newInsertClient(t, engine, schema)
	res, err := client.Insert(ctx, shipArgs{OrderID: "4711"},
		JobContext{ProcessInstanceID: "order-held-4711", ProcessDefinitionKey: "order", ActivityID: "reserve", TenantID: "acme"}.InsertOpts())
	require.NoError(t, err)
	_, err = client.Insert(ctx, shipArgs{OrderID: "4712"},
		JobContext{ProcessInstanceID: "order-4712", ProcessDefinitionKey: "order", ActivityID: "reserve"}.InsertOpts())
	require.NoError(t, err)

	job, err := client.JobGet(ctx, res.Job.ID)
	require.NoError(t, err)
	var shown map[string]map[string]any
	require.NoError(t, json.Unmarshal(job.Metadata, &shown))
	require.Equal(t, map[string]any{
		"instance": "order-held-4711", "process": "order", "job": "order:reserve", "tenant": "acme",
	}, shown[MetadataKey], "labels, what the job definition says and the defaults left out")

	for filter, want := range map[string]int{
		`{"bpmn": {"instance": "order-held-4711"}}`: 1,
		`{"bpmn": {"process": "order"}}`:            2,
		`{"bpmn": {"job": "order:reserve"}}`:        2,
		`{"bpmn": {"tenant": "acme"}}`:              1,
		`{"bpmn": {"instance": "order-4713"}}`:      0,
	} {
		found, err := client.JobList(ctx, river.NewJobListParams().Metadata(filter))
		require.NoError(t, err)
		require.Len(t, found.Jobs, want, filter)
	}
}
