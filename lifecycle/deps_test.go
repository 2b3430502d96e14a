package lifecycle_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// complete marks jobs completed the way River's completer does (an UPDATE of
// state), so that the release trigger runs.
func (f *fixture) complete(t *testing.T, ids ...int64) {
	t.Helper()
	_, err := f.pool.Exec(context.Background(), fmt.Sprintf(
		`UPDATE %s SET state = 'completed', finalized_at = now() WHERE id = ANY($1)`,
		pgx.Identifier{f.schema, "river_job"}.Sanitize()), ids)
	require.NoError(t, err)
}

func (f *fixture) progress(t *testing.T, id int64) *lifecycle.Progress {
	t.Helper()
	p, err := f.engine.Lifecycle().Dependencies(context.Background(), id)
	require.NoError(t, err)
	return p
}

func TestDependsOnReleasedByLastPrerequisite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	a := f.insert(t, lcArgs{Name: "a"}, lifecycle.Opts{})
	b := f.insert(t, lcArgs{Name: "b"}, lifecycle.Opts{})
	done := f.insert(t, lcArgs{Name: "done"}, lifecycle.Opts{})
	f.complete(t, done.ID)

	c := f.insert(t, lcArgs{Name: "c"}, lifecycle.Opts{DependsOn: []int64{a.ID, b.ID, done.ID, a.ID}})
	require.Equal(t, []hold.Reason{lifecycle.Prerequisites}, f.reasons(t, c.ID))
	p := f.progress(t, c.ID)
	require.Equal(t, 1, p.Done)
	require.Equal(t, 3, p.Total)
	require.Equal(t, 1, f.progress(t, a.ID).Dependents)

	f.complete(t, a.ID)
	require.Equal(t, []hold.Reason{lifecycle.Prerequisites}, f.reasons(t, c.ID))
	require.Equal(t, 2, f.progress(t, c.ID).Done)
	f.complete(t, b.ID)
	require.Nil(t, f.reasons(t, c.ID))
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, c.ID).State)
	p = f.progress(t, c.ID)
	require.Equal(t, 3, p.Done)
	require.Equal(t, 3, p.Total)
	require.Equal(t, 0, f.progress(t, b.ID).DependentsWaiting)

	// Every prerequisite complete at insert: not held at all.
	d := f.insert(t, lcArgs{Name: "d"}, lifecycle.Opts{DependsOn: []int64{a.ID, b.ID}})
	require.Equal(t, rivertype.JobStateAvailable, d.State)
	require.Equal(t, 2, f.progress(t, d.ID).Done)

	// Unknown prerequisite: the insert fails naming it, nothing is written.
	_, err := f.client.Insert(ctx, lcArgs{Name: "e"}, insertOpts(t, "", lifecycle.Opts{DependsOn: []int64{a.ID, 77777777}}))
	require.ErrorContains(t, err, "job 77777777 does not exist")

	// Same transaction: prerequisite and dependent inserted together.
	tx, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	pre, err := f.client.InsertTx(ctx, tx, lcArgs{Name: "pre"}, nil)
	require.NoError(t, err)
	dep, err := f.client.InsertTx(ctx, tx, lcArgs{Name: "dep"}, insertOpts(t, "", lifecycle.Opts{DependsOn: []int64{pre.Job.ID}}))
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStatePending, dep.Job.State)
	require.NoError(t, tx.Commit(ctx))
	f.complete(t, pre.Job.ID)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, dep.Job.ID).State)

	// InsertMany: a later job of the batch cannot name an earlier one (no
	// id yet), but can name any job inserted before.
	many, err := f.client.InsertMany(ctx, []river.InsertManyParams{
		{Args: lcArgs{Name: "m1"}, InsertOpts: insertOpts(t, "", lifecycle.Opts{DependsOn: []int64{dep.Job.ID}})},
		{Args: lcArgs{Name: "m2"}, InsertOpts: insertOpts(t, "", lifecycle.Opts{DependsOn: []int64{dep.Job.ID}})},
	})
	require.NoError(t, err)
	f.complete(t, dep.Job.ID)
	for _, m := range many {
		require.Equal(t, rivertype.JobStateAvailable, f.job(t, m.Job.ID).State)
	}
}

// Prerequisites, pending and suspension each hold on their own.
func TestDependsOnInterleavesWithPendingAndSuspension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	a := f.insert(t, lcArgs{Name: "a"}, lifecycle.Opts{})
	c := f.insert(t, lcArgs{Name: "c", Instance: "pi-s"}, lifecycle.Opts{Pending: true, DependsOn: []int64{a.ID}})
	require.Equal(t, []hold.Reason{lifecycle.Pending, lifecycle.Prerequisites}, f.reasons(t, c.ID))
	_, err := f.engine.SuspendProcessInstance(ctx, "pi-s")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{lifecycle.Pending, lifecycle.Prerequisites, hold.Suspended}, f.reasons(t, c.ID))

	f.complete(t, a.ID)
	require.Equal(t, []hold.Reason{lifecycle.Pending, hold.Suspended}, f.reasons(t, c.ID))
	_, err = f.engine.ActivateProcessInstance(ctx, "pi-s")
	require.NoError(t, err)
	require.Equal(t, []hold.Reason{lifecycle.Pending}, f.reasons(t, c.ID))
	res, err := f.engine.Lifecycle().Queue(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.Queued, res[0].Outcome)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, c.ID).State)

	// Queued before the prerequisite completes: still held by it.
	b := f.insert(t, lcArgs{Name: "b"}, lifecycle.Opts{})
	d := f.insert(t, lcArgs{Name: "d"}, lifecycle.Opts{Pending: true, DependsOn: []int64{b.ID}})
	res, err = f.engine.Lifecycle().Queue(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, lifecycle.StillHeld, res[0].Outcome)
	require.Equal(t, []hold.Reason{lifecycle.Prerequisites}, f.reasons(t, d.ID))
	f.complete(t, b.ID)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, d.ID).State)
}

// A prerequisite locked by another transaction when its dependent is
// inserted: the insert does not wait; the dependency is linked by Link (the
// leader's lifecycle service), whether the prerequisite completed meanwhile
// or not.
func TestDependsOnLockedPrerequisiteIsLinkedLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	table := pgx.Identifier{f.schema, "river_job"}.Sanitize()
	p1 := f.insert(t, lcArgs{Name: "p1"}, lifecycle.Opts{})
	p2 := f.insert(t, lcArgs{Name: "p2"}, lifecycle.Opts{})

	// p1 is being completed by another transaction while d is inserted.
	other, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer other.Rollback(ctx) //nolint:errcheck
	_, err = other.Exec(ctx, fmt.Sprintf(`UPDATE %s SET state = 'completed', finalized_at = now() WHERE id = $1`, table), p1.ID)
	require.NoError(t, err)
	_, err = other.Exec(ctx, fmt.Sprintf(`SELECT 1 FROM %s WHERE id = $1 FOR UPDATE`, table), p2.ID)
	require.NoError(t, err)
	d := f.insert(t, lcArgs{Name: "d"}, lifecycle.Opts{DependsOn: []int64{p1.ID, p2.ID}}) // does not wait
	require.NoError(t, other.Commit(ctx))
	require.Equal(t, []hold.Reason{lifecycle.Prerequisites}, f.reasons(t, d.ID))

	linked, err := lifecycle.Link(ctx, f.pool, f.schema)
	require.NoError(t, err)
	require.Equal(t, 2, linked)
	p := f.progress(t, d.ID)
	require.Equal(t, 1, p.Done, "p1 completed meanwhile")
	require.Contains(t, string(f.job(t, p2.ID).Metadata), lifecycle.DependentsKey, "p2 is marked")
	f.complete(t, p2.ID)
	require.Equal(t, rivertype.JobStateAvailable, f.job(t, d.ID).State)
	linked, err = lifecycle.Link(ctx, f.pool, f.schema)
	require.NoError(t, err)
	require.Equal(t, 0, linked)
}
