package workflow

import (
	"context"
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
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/internal/jobctx"
)

// compactContextVersion is the version of migration 016_compact_job_context,
// which made the job context a JSON array.
const compactContextVersion = 16

// labelledContextVersion is the version of migration 028_labelled_job_context,
// which made it the labelled object.
const labelledContextVersion = 28

// insertObjectFormJobs inserts n available exclArgs jobs in the object form
// of the job context, as clients before migration riverbpmn/016 stored it,
// by raw SQL (this build cannot write that form): job i belongs to instance
// "inst-(i % instances)", is exclusive, and has priority priority(i).
func insertObjectFormJobs(ctx context.Context, db *pgxpool.Pool, schema string, first, n, instances int, priority string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
		INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state)
		SELECT jsonb_build_object('instance', 'inst-' || (i %% %[2]d), 'sleep_micros', 1000),
			'excl_test', 25,
			jsonb_build_object('bpmn', jsonb_build_object(
				'process_instance_id', 'inst-' || (i %% %[2]d),
				'process_definition_key', 'excl_process',
				'exclusive', true,
				'priority', %[3]s)),
			1, 'default', 'available'
		FROM generate_series($1::bigint, $2::bigint) AS i`,
		pgx.Identifier{schema}.Sanitize(), instances, priority), first, first+n-1)
	return err
}

// TestCompactJobContextUpgrade upgrades a table holding jobs in the object
// form of the job context to migration 016 while two clients run and an
// inserter of the previous version keeps writing the object form, then adds
// jobs in the compact form for the same instances. Every job, of either
// form, runs exactly once; no two jobs of one instance overlap, whatever
// their forms; the lookups by instance find both forms; and fetching by
// priority orders both forms as one.
func TestCompactJobContextUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema := emptySchema(t)
	_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: compactContextVersion - 1})
	require.NoError(t, err)

	const instances = 40
	require.NoError(t, insertObjectFormJobs(ctx, pool, schema, 0, 400, instances, "(i % 7)"))

	rec := newExclRecorder(exclusive.ProcessInstance)
	nodes := make([]*exclNode, 2)
	for i := range nodes {
		nodes[i] = newExclNode(t, schema, rec, exclNodeOpts{
			scope: exclusive.ProcessInstance, maxWorkers: 20, poolConns: 6, poll: 50 * time.Millisecond, cooldown: time.Millisecond,
		})
		require.NoError(t, nodes[i].client.Start(ctx))
	}

	// A client of the previous version goes on inserting object-form jobs
	// (by raw SQL) across the migration.
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
			if oldErr = insertObjectFormJobs(ctx, pool, schema, int(oldInserted.Load()), 10, instances, "(i % 7)"); oldErr != nil {
				return
			}
			oldInserted.Add(10)
		}
	})

	time.Sleep(200 * time.Millisecond) // the clients run (their fetches fail) before the migration
	res, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: labelledContextVersion - 1})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(res.BPMN.Versions, func(v rivermigrate.MigrateVersion) bool { return v.Version == compactContextVersion }),
		"migrated through %d", compactContextVersion)
	oldAtMigration := oldInserted.Load()

	// New-format jobs for the same instances, inserted through the client.
	var newJobs []exclArgs
	for i := range 400 {
		newJobs = append(newJobs, exclArgs{Instance: fmt.Sprintf("inst-%d", i%instances), SleepMicros: 1000})
	}
	insertExcl(ctx, t, nodes[0].client, newJobs)
	require.Eventually(t, func() bool { return oldInserted.Load() > oldAtMigration+50 }, 10*time.Second, 10*time.Millisecond,
		"object-form jobs are inserted after the migration too")
	close(stopOld)
	oldDone.Wait()
	require.NoError(t, oldErr, "inserting object-form jobs across the migration")

	total := int(oldInserted.Load()) + len(newJobs)
	require.Eventually(t, func() bool { return rec.finishedCount.Load() >= int64(total) }, 60*time.Second, 10*time.Millisecond,
		"finished %d of %d", rec.finishedCount.Load(), total)
	for _, node := range nodes {
		require.NoError(t, node.client.Stop(ctx))
	}

	// Exactly once, both forms.
	var completed, objects, arrays int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`
		SELECT count(*) FILTER (WHERE state = 'completed'),
			count(*) FILTER (WHERE jsonb_typeof(metadata -> 'bpmn') = 'object'),
			count(*) FILTER (WHERE jsonb_typeof(metadata -> 'bpmn') = 'array')
		FROM %s.river_job`, pgx.Identifier{schema}.Sanitize())).Scan(&completed, &objects, &arrays))
	require.Equal(t, total, completed)
	require.Equal(t, int(oldInserted.Load()), objects)
	require.Equal(t, len(newJobs), arrays)
	rec.mu.Lock()
	require.Len(t, rec.finished, total)
	for id, n := range rec.finished {
		require.Equal(t, 1, n, "job %d", id)
	}
	rec.mu.Unlock()

	// Exclusivity across forms.
	overlaps := exclusive.Overlaps(rec.timeline.Spans())
	for _, overlap := range overlaps[:min(len(overlaps), 10)] {
		t.Error(overlap)
	}
	require.Empty(t, overlaps, "no two jobs of one instance overlapped, whatever their forms")

	// Lookups by instance find both forms.
	engine := nodes[0].engine
	jobs, err := engine.ProcessInstanceJobs(ctx, "inst-3")
	require.NoError(t, err)
	forms := map[byte]int{}
	for _, job := range jobs {
		raw, err := jobctx.Stored(job.Metadata)
		require.NoError(t, err)
		forms[raw[0]]++
		jc, err := JobContextOf(job)
		require.NoError(t, err)
		require.Equal(t, "inst-3", jc.ProcessInstanceID)
	}
	var inst3 int
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %[1]s.river_job WHERE args ->> 'instance' = 'inst-3'`,
		pgx.Identifier{schema}.Sanitize())).Scan(&inst3))
	require.Len(t, jobs, inst3)
	require.Positive(t, forms['{'], "object-form jobs found")
	require.Positive(t, forms['['], "array-form jobs found")
	page, err := engine.ProcessInstanceJobsPage(ctx, "inst-3", 0, 1000)
	require.NoError(t, err)
	require.Len(t, page, len(jobs))

	t.Run("PrioritiesAcrossForms", func(t *testing.T) {
		// Non-exclusive jobs of their own instances: old rows with priorities
		// 10, 30, 50, new ones with 20, 40, 60. One worker fetching by
		// priority runs them highest first.
		_, err := pool.Exec(ctx, fmt.Sprintf(`
			INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state)
			SELECT jsonb_build_object('instance', 'prio-' || p), 'excl_test', 25,
				jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', 'prio-' || p,
					'process_definition_key', 'excl_process', 'exclusive', false, 'priority', p)),
				1, 'default', 'available'
			FROM unnest(ARRAY[10, 30, 50]) AS p`, pgx.Identifier{schema}.Sanitize()))
		require.NoError(t, err)
		prioRec := newExclRecorder(exclusive.ProcessInstance)
		node := newExclNode(t, schema, prioRec, exclNodeOpts{
			maxWorkers: 1, poolConns: 2, poll: 20 * time.Millisecond, cooldown: time.Millisecond,
			acquisition: &Acquisition{ByPriority: true},
		})
		client := node.client
		var params []river.InsertManyParams
		for _, p := range []int64{20, 40, 60} {
			params = append(params, river.InsertManyParams{
				Args: prioArgs{exclArgs{Instance: fmt.Sprintf("prio-%d", p), NonExclusive: true}, p},
			})
		}
		_, err = client.InsertMany(ctx, params)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		require.Eventually(t, func() bool { return prioRec.finishedCount.Load() == 6 }, 10*time.Second, 5*time.Millisecond)
		require.NoError(t, client.Stop(ctx))

		spans := prioRec.timeline.Spans()
		slices.SortFunc(spans, func(a, b exclusive.Span) int { return a.Start.Compare(b.Start) })
		var order []string
		for _, span := range spans {
			var instance string
			require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT args ->> 'instance' FROM %s.river_job WHERE id = $1`,
				pgx.Identifier{schema}.Sanitize()), span.JobID).Scan(&instance))
			order = append(order, instance)
		}
		require.Equal(t, []string{"prio-60", "prio-50", "prio-40", "prio-30", "prio-20", "prio-10"}, order)
	})
}

// TestCompactJobContextMigrateDown: migrating down from 016 rewrites jobs of
// the compact form into the object form, which the readers of 015 read,
// field for field.
func TestCompactJobContextMigrateDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	schema := emptySchema(t)
	_, err := MigrateUp(ctx, pool, &MigrateOpts{Schema: schema})
	require.NoError(t, err)
	priority, isExclusive := int64(5), true
	jc := JobContext{
		ProcessInstanceID: "sub", RootProcessInstanceID: "top", ProcessDefinitionKey: "p", ActivityID: "a",
		Priority: &priority, Exclusive: &isExclusive, TenantID: "acme",
	}
	metadata, err := jc.AddToMetadata([]byte(`{"mine": true}`))
	require.NoError(t, err)
	var id int64
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`
		INSERT INTO %s.river_job (args, kind, max_attempts, metadata, priority, queue, state)
		VALUES ('{}', 'k', 25, $1, 1, 'default', 'available') RETURNING id`, pgx.Identifier{schema}.Sanitize()), metadata).Scan(&id))

	_, err = MigrateDown(ctx, pool, &MigrateOpts{Schema: schema, TargetVersion: compactContextVersion - 1})
	require.NoError(t, err)
	var stored string
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT metadata::text FROM %s.river_job WHERE id = $1`,
		pgx.Identifier{schema}.Sanitize()), id).Scan(&stored))
	require.JSONEq(t, `{"mine": true, "bpmn": {"process_instance_id": "sub", "root_process_instance_id": "top",
		"process_definition_key": "p", "activity_id": "a", "priority": 5, "exclusive": true, "tenant_id": "acme"}}`, stored)
}

// prioArgs is an exclArgs job with an explicit priority in its job context.
type prioArgs struct {
	exclArgs
	Priority int64 `json:"-"`
}

func (a prioArgs) JobContext() JobContext {
	jc := a.exclArgs.JobContext()
	jc.Priority = &a.Priority
	return jc
}
