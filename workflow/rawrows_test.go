package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
)

// insertRawJob writes a river_job row by hand, with any JSON as metadata, as
// an operator or another tool might.
func insertRawJob(ctx context.Context, t *testing.T, engine *Engine, metadata, state string) int64 {
	t.Helper()
	finalized := "NULL"
	if state == "discarded" || state == "completed" || state == "cancelled" {
		finalized = "now()"
	}
	var id int64
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(
		`INSERT INTO %s.river_job (args, kind, max_attempts, metadata, queue, state, priority, attempt, finalized_at)
		VALUES ('{}', 'raw', 1, $1::jsonb, 'default', $2::text::%[1]s.river_job_state, 1, 1, %s) RETURNING id`,
		pgx.Identifier{engine.config.Schema}.Sanitize(), finalized), metadata, state).Scan(&id))
	return id
}

func rawIncidentCount(ctx context.Context, t *testing.T, engine *Engine, jobID int64) int {
	t.Helper()
	var n int
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s.river_bpmn_incident WHERE job_id = $1`,
		pgx.Identifier{engine.config.Schema}.Sanitize()), jobID).Scan(&n))
	return n
}

func rawMetadata(ctx context.Context, t *testing.T, engine *Engine, jobID int64) string {
	t.Helper()
	var metadata string
	require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`SELECT metadata::text FROM %s.river_job WHERE id = $1`,
		pgx.Identifier{engine.config.Schema}.Sanitize()), jobID).Scan(&metadata))
	return metadata
}

// TestRawRows: rows written by hand with metadata that is not what riverbpmn
// writes either work or give an error naming the job, never a wrong write.
func TestRawRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	engine, _ := testEngine(t)
	schema := pgx.Identifier{engine.config.Schema}.Sanitize()

	t.Run("IncidentOnlyForJobContexts", func(t *testing.T) {
		for metadata, want := range map[string]int{
			`{"bpmn": null}`:   0,
			`"bpmn"`:           0,
			`["bpmn"]`:         0,
			`{"bpmn": "nope"}`: 1, // a malformed job context: an incident with empty columns
			`{}`:               0,
			`{"bpmn": {}}`:     1,
			`{"bpmn": {"process_instance_id": "pi"}}`: 1,
		} {
			id := insertRawJob(ctx, t, engine, metadata, "running")
			_, err := engine.dbPool.Exec(ctx, fmt.Sprintf(`UPDATE %s.river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, schema), id)
			require.NoError(t, err)
			require.Equal(t, want, rawIncidentCount(ctx, t, engine, id), "metadata %s", metadata)
		}
	})

	t.Run("SetJobRetriesOnScalarMetadata", func(t *testing.T) {
		for _, metadata := range []string{`"bpmn"`, `42`, `[1, 2]`, `null`} {
			id := insertRawJob(ctx, t, engine, metadata, "discarded")
			require.NoError(t, engine.SetJobRetries(ctx, id, 2), "metadata %s", metadata)
			var state string
			require.NoError(t, engine.dbPool.QueryRow(ctx, fmt.Sprintf(`SELECT state::text FROM %s.river_job WHERE id = $1`, schema), id).Scan(&state))
			require.Equal(t, "available", state, "metadata %s", metadata)
			require.JSONEq(t, metadata, rawMetadata(ctx, t, engine, id), "metadata left as it was")
		}
	})

	t.Run("SetJobPriorityOnNonObjectMetadata", func(t *testing.T) {
		for _, metadata := range []string{`"bpmn"`, `42`, `[1, 2]`, `null`} {
			id := insertRawJob(ctx, t, engine, metadata, "available")
			err := engine.SetJobPriority(ctx, id, 5)
			require.Error(t, err, "metadata %s", metadata)
			require.ErrorContains(t, err, fmt.Sprintf("job %d", id))
			require.ErrorContains(t, err, "not an object")
			require.JSONEq(t, metadata, rawMetadata(ctx, t, engine, id), "metadata left as it was")
		}
		id := insertRawJob(ctx, t, engine, `{"bpmn": null}`, "available")
		require.NoError(t, engine.SetJobPriority(ctx, id, 5), "an object with a malformed context gets one")
		require.JSONEq(t, `{"bpmn": {"priority": 5}}`, rawMetadata(ctx, t, engine, id), "in the labelled form")
		id = insertRawJob(ctx, t, engine, `{"bpmn": {"process_instance_id": "pi", "priority": 1}}`, "available")
		require.NoError(t, engine.SetJobPriority(ctx, id, 5))
		require.JSONEq(t, `{"bpmn": {"instance": "pi", "exclusive": false, "priority": 5}}`, rawMetadata(ctx, t, engine, id),
			"an object of the form before migration 016, rewritten on insert (without exclusive: not exclusive)")
		id = insertRawJob(ctx, t, engine, `{"bpmn": ["pi", "p"]}`, "available")
		require.NoError(t, engine.SetJobPriority(ctx, id, 5))
		require.JSONEq(t, `{"bpmn": {"instance": "pi", "process": "p", "exclusive": false, "priority": 5}}`, rawMetadata(ctx, t, engine, id),
			"an array of migration 016, rewritten on insert")
	})

	t.Run("JobIncidentsNotFound", func(t *testing.T) {
		_, err := engine.JobIncidents(ctx, 987654321)
		require.ErrorIs(t, err, ErrNotFound)
		require.ErrorContains(t, err, "job 987654321")

		id := insertRawJob(ctx, t, engine, `{}`, "available")
		incidents, err := engine.JobIncidents(ctx, id)
		require.NoError(t, err, "a job without incidents has none")
		require.Empty(t, incidents)
	})
}

// TestEngineLogger: the engine logs through Config.Logger, else through the
// logger of its most recently built client, not slog.Default.
func TestEngineLogger(t *testing.T) {
	t.Parallel()
	own := slog.New(slog.DiscardHandler)
	engine, err := NewEngine(testPool(t), &Config{Logger: own})
	require.NoError(t, err)
	require.Same(t, own, engine.logger())

	engine, err = NewEngine(testPool(t), &Config{})
	require.NoError(t, err)
	clientLogger := slog.New(slog.DiscardHandler)
	_, err = river.NewClient(engine.Driver(), &river.Config{Logger: clientLogger})
	require.NoError(t, err)
	require.Same(t, clientLogger, engine.logger())
}
