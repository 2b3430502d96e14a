package workflow

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// oddJobsSQL inserts rows that stress the decoder: attempt errors in River's
// format and in lenient forms River still accepts, unique keys and states,
// nested and unicode metadata, several tags, and args that are odd but valid
// JSON (arrays, scalars, huge numbers, escapes).
const oddJobsSQL = `
INSERT INTO %[1]s.river_job (
    id, args, attempt, attempted_at, attempted_by, created_at, errors, finalized_at,
    kind, max_attempts, metadata, priority, queue, state, scheduled_at, tags,
    unique_key, unique_states
) VALUES
(1, '[1, "two", {"three": [null, true, 1.5e300]}]', 2, '2026-03-01 10:00:00.123456+05', ARRAY['c1', 'c2'],
 '2026-02-28 23:59:59.999999-08',
 ARRAY['{"at": "2026-03-01T05:00:00.5Z", "attempt": 1, "error": "first", "trace": "goroutine 1"}'::jsonb,
       '{"at": "not a time", "attempt": "2", "error": {"nested": true}}'::jsonb,
       '"a bare string error"'::jsonb],
 NULL, 'odd_args', 5, '{"bpmn": {"process_definition_key": "order"}, "ünïcødé": ["😀", {"deep": {"deeper": []}}]}',
 4, 'default', 'available', '2026-01-01 00:00:00+00', ARRAY['alpha', 'beta-2', 'gamma_3'],
 '\x0001ff'::bytea, B'11110101'),
(2, '"just a string"', 0, NULL, NULL, '2026-01-01 00:00:00+00', NULL, NULL,
 'scalar_args', 25, '{}', 1, 'default', 'available', '2026-01-01 00:00:00+00', '{}', NULL, NULL),
(3, '123456789012345678901234567890', 0, NULL, NULL, '2026-01-01 00:00:00+00', NULL, NULL,
 'number_args', 25, '{}', 2, 'default', 'available', '2026-01-01 00:00:00+00', '{}', NULL, NULL),
(4, '{"s": "tab\there \"quoted\" \\ back \u00e9 \ud83d\ude00"}', 3, '2026-01-01 00:00:00+00', ARRAY['x'],
 '2026-01-01 00:00:00+00', ARRAY['{"at": "2026-01-01T00:00:00Z", "attempt": 3, "error": "done"}'::jsonb],
 '2026-01-02 00:00:00+00', 'finished', 3, '{"k": null}', 1, 'other', 'completed', '2026-01-01 00:00:00+00',
 '{}', 'key-4', B'00000010'),
(5, '{}', 0, NULL, NULL, '2026-01-01 00:00:00+00', '{}', NULL, 'empty_errors', 25, '{}', 1, 'default',
 'available', '2026-01-01 00:00:00+00', '{}', NULL, B'00000000')`

// requireSameJobRow compares two rows field by field, naming the field that
// differs.
func requireSameJobRow(t *testing.T, want, got *rivertype.JobRow) {
	t.Helper()
	wantValue, gotValue := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	for i := range wantValue.NumField() {
		field := wantValue.Type().Field(i).Name
		require.Equal(t, wantValue.Field(i).Interface(), gotValue.Field(i).Interface(), "job %d field %s", want.ID, field)
	}
}

func TestScanJobRowMatchesRiverJobGetByID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	engine, schema := testEngine(t)
	exec := engine.Driver().GetExecutor()
	require.NoError(t, exec.Exec(ctx, fmt.Sprintf(oddJobsSQL, pgx.Identifier{schema}.Sanitize())))

	readOurs := func(t *testing.T, id int64) *rivertype.JobRow {
		t.Helper()
		rows, err := engine.dbPool.Query(ctx, renderSQL("SELECT /* COLUMNS: river_job */ FROM /* TEMPLATE: schema */river_job WHERE id = $1", schema), id)
		require.NoError(t, err)
		jobs, decodeErrors, err := scanJobRows(rows)
		require.NoError(t, err)
		require.Empty(t, decodeErrors)
		require.Len(t, jobs, 1)
		return jobs[0]
	}

	t.Run("EveryStateAndField", func(t *testing.T) {
		for id := int64(1); id <= 5; id++ {
			want, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: id, Schema: schema})
			require.NoError(t, err)
			requireSameJobRow(t, want, readOurs(t, id))
		}
	})

	t.Run("FetchedRowsMatchJobGetByIDAfterTheFetch", func(t *testing.T) {
		now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		res, err := newPilot(engine.Driver()).JobGetAvailable(ctx, exec, nil, &riverdriver.JobGetAvailableParams{
			ClientID: "decoder-test", MaxAttemptedBy: 2, MaxToLock: 10, Now: &now, Queue: "default", Schema: schema,
		})
		require.NoError(t, err)
		require.Empty(t, res.DecodeErrors)
		// Which jobs a fetch takes follows River's order (TestFetchEquivalentToStockRiver);
		// the order of the returned rows is that of River's UPDATE ... RETURNING,
		// which PostgreSQL does not define (seen as 2, 5, 3, 1 and as 1, 2, 3, 5).
		require.ElementsMatch(t, []int64{2, 5, 3, 1}, jobIDs(res.Jobs))
		for _, got := range res.Jobs {
			want, err := exec.JobGetByID(ctx, &riverdriver.JobGetByIDParams{ID: got.ID, Schema: schema})
			require.NoError(t, err)
			requireSameJobRow(t, want, got)
			require.Equal(t, rivertype.JobStateRunning, got.State)
			require.Equal(t, now, *got.AttemptedAt)
		}

		job1 := res.Jobs[slices.IndexFunc(res.Jobs, func(j *rivertype.JobRow) bool { return j.ID == 1 })]
		require.Equal(t, []string{"c2", "decoder-test"}, job1.AttemptedBy, "attempted_by capped at MaxAttemptedBy")
		require.Equal(t, 3, job1.Attempt)
		require.Len(t, job1.Errors, 3)
		require.Equal(t, "first", job1.Errors[0].Error)
		require.Equal(t, 2, job1.Errors[1].Attempt, "lenient attempt decoded like River")
		require.Equal(t, "a bare string error", job1.Errors[2].Error)
		// B'11110101': bit 0 (leftmost) is scheduled ... bit 7 is available.
		require.Equal(t, []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStateCompleted, rivertype.JobStatePending,
			rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled,
		}, job1.UniqueStates)
		require.JSONEq(t, `[1, "two", {"three": [null, true, 1.5e300]}]`, string(job1.EncodedArgs))
		require.Equal(t, []string{"alpha", "beta-2", "gamma_3"}, job1.Tags)
		require.Equal(t, []byte{0x00, 0x01, 0xff}, job1.UniqueKey)
		require.Equal(t, time.UTC, job1.CreatedAt.Location())
	})
}
