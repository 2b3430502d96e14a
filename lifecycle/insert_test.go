package lifecycle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/workflow"
)

type lifecycleInsertArgs struct{}

func (lifecycleInsertArgs) Kind() string { return "lifecycle_insert" }

// TestLifecycleBadInputAtInsert: lifecycle options that leave a job no chance
// to run, or name a job that does not exist, fail the insert with the
// insert's prefix, the field and the value, and nothing is written.
func TestLifecycleBadInputAtInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := setup(t)
	client := f.client
	opts := func(t *testing.T, o lifecycle.Opts) *river.InsertOpts {
		t.Helper()
		insertOpts, err := o.Apply(nil)
		require.NoError(t, err)
		return insertOpts
	}
	count := func(t *testing.T) int {
		t.Helper()
		var n int
		require.NoError(t, f.pool.QueryRow(ctx, sqltemplate.Render(`SELECT count(*) FROM /* TEMPLATE: schema */river_job`, f.schema)).Scan(&n))
		return n
	}

	t.Run("ExpiresAtPast", func(t *testing.T) {
		past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		_, err := client.Insert(ctx, lifecycleInsertArgs{}, opts(t, lifecycle.Opts{ExpiresAt: &past}))
		require.ErrorContains(t, err, "insert of lifecycle_insert job: lifecycle.Opts.ExpiresAt 2020-01-02T03:04:05Z is already past (now ")
		require.ErrorContains(t, err, "the job would expire before it could start")
	})

	t.Run("ExpiresAtNotAfterScheduledAt", func(t *testing.T) {
		expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		insertOpts := opts(t, lifecycle.Opts{ExpiresAt: &expires})
		insertOpts.ScheduledAt = expires.Add(time.Minute)
		_, err := client.Insert(ctx, lifecycleInsertArgs{}, insertOpts)
		require.ErrorContains(t, err, "insert of lifecycle_insert job: lifecycle.Opts.ExpiresAt "+expires.Format(time.RFC3339Nano)+" is not after the job's scheduled time "+expires.Add(time.Minute).Format(time.RFC3339Nano))
	})

	t.Run("ExpiresAtPastInABatch", func(t *testing.T) {
		future, past := time.Now().Add(time.Hour), time.Now().Add(-time.Second)
		_, err := client.InsertMany(ctx, []river.InsertManyParams{
			{Args: lifecycleInsertArgs{}, InsertOpts: opts(t, lifecycle.Opts{ExpiresAt: &future})},
			{Args: lifecycleInsertArgs{}, InsertOpts: opts(t, lifecycle.Opts{ExpiresAt: &past})},
		})
		require.ErrorContains(t, err, "insert of job 2 of 2 (lifecycle_insert): lifecycle.Opts.ExpiresAt ")
	})

	t.Run("DependsOnMissingJob", func(t *testing.T) {
		_, err := client.Insert(ctx, lifecycleInsertArgs{}, opts(t, lifecycle.Opts{DependsOn: []int64{77777777}}))
		require.ErrorContains(t, err, "insert of lifecycle_insert job: lifecycle.Opts.DependsOn names job 77777777, which does not exist")
		require.ErrorIs(t, err, lifecycle.ErrJobNotFound)
		require.ErrorIs(t, err, workflow.ErrNotFound)
	})

	t.Run("DependsOnMissingJobInABatch", func(t *testing.T) {
		pre, err := client.Insert(ctx, lifecycleInsertArgs{}, nil)
		require.NoError(t, err)
		before := count(t)
		_, err = client.InsertMany(ctx, []river.InsertManyParams{
			{Args: lifecycleInsertArgs{}, InsertOpts: opts(t, lifecycle.Opts{DependsOn: []int64{pre.Job.ID}})},
			{Args: lifecycleInsertArgs{}, InsertOpts: opts(t, lifecycle.Opts{DependsOn: []int64{pre.Job.ID, 88888888}})},
		})
		require.ErrorContains(t, err, "insert of job 2 of 2 (lifecycle_insert): lifecycle.Opts.DependsOn names job 88888888, which does not exist")
		require.True(t, errors.Is(err, lifecycle.ErrJobNotFound))
		require.Equal(t, before, count(t), "nothing of the batch is written")
	})

	t.Run("FutureExpiryAndExistingPrerequisiteAreAccepted", func(t *testing.T) {
		pre, err := client.Insert(ctx, lifecycleInsertArgs{}, nil)
		require.NoError(t, err)
		future := time.Now().Add(time.Minute)
		_, err = client.Insert(ctx, lifecycleInsertArgs{}, opts(t, lifecycle.Opts{ExpiresAt: &future, DependsOn: []int64{pre.Job.ID}}))
		require.NoError(t, err)
	})
}
