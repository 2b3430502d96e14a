package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/retrypolicy"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// retryProcess declares the process and job definitions the retry tests use:
// one job definition per cycle, all of kind retryArgs.
func retryConfig(defaultCycle string, cycles map[string]string) *Config {
	config := &Config{
		DefaultRetryCycle:  defaultCycle,
		ProcessDefinitions: []ProcessDefinition{{Key: "order_process"}},
		// The retry timelines measure the wait River's retry policy decides
		// from the end of the worker's Work; exclusivity (on by default)
		// gives the job's key back in between, a statement that on a loaded
		// machine takes longer than the timelines' slack.
		ExclusiveScope: exclusive.None,
	}
	for id, cycle := range cycles {
		config.JobDefinitions = append(config.JobDefinitions, JobDefinition{
			ID: id, ProcessDefinitionKey: "order_process", ActivityID: "act-" + id, Kind: retryArgs{}.Kind(), RetryCycle: cycle,
		})
	}
	return config
}

type retryArgs struct {
	Name string `json:"name"`
}

func (retryArgs) Kind() string { return "retry_test" }

// jobOf returns a job context of job definition jobDefinitionID in process
// instance instance.
func jobOf(jobDefinitionID, instance string) JobContext {
	return JobContext{JobDefinitionID: jobDefinitionID, ProcessInstanceID: instance}
}

func TestRetryCycleRejectedAtNewEngine(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name    string
		config  *Config
		inError string
		invalid bool // a parse error, matching retrypolicy.ErrInvalid
	}{
		{"JobDefinition", retryConfig("", map[string]string{"ship-async": "R3/PX1S"}),
			`workflow: job definition "ship-async": RetryCycle "R3/PX1S": is not a valid retry time cycle: retrypolicy: invalid retry cycle "R3/PX1S"`, true},
		{"JobDefinitionStartDate", retryConfig("", map[string]string{"ship-async": "R3/2024-01-01T00:00:00Z/PT1M"}),
			`workflow: job definition "ship-async": RetryCycle "R3/2024-01-01T00:00:00Z/PT1M": is not a valid retry time cycle`, true},
		{"JobDefinitionTooManyExecutions", retryConfig("", map[string]string{"ship-async": "R40000/PT1S"}),
			`workflow: job definition "ship-async": RetryCycle "R40000/PT1S": allows 40000 executions, more than River's max_attempts holds (32767)`, false},
		{"Default", retryConfig("PT5M,,PT1M", nil),
			`workflow: engine config: DefaultRetryCycle "PT5M,,PT1M": is not a valid retry time cycle: retrypolicy: invalid retry cycle "PT5M,,PT1M": entry 2 is empty`, true},
		{"DefaultLowerCase", retryConfig("r3/pt1s", nil),
			`workflow: engine config: DefaultRetryCycle "r3/pt1s": is not a valid retry time cycle`, true},
		{"DefaultTooManyExecutions", retryConfig("R32768/PT1S", nil),
			`workflow: engine config: DefaultRetryCycle "R32768/PT1S": allows 32768 executions`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewEngine(nil, tc.config)
			require.ErrorContains(t, err, tc.inError)
			var defErr *DefinitionError
			require.ErrorAs(t, err, &defErr)
			require.Equal(t, tc.invalid, errors.Is(err, retrypolicy.ErrInvalid))
		})
	}

	t.Run("LimitsAccepted", func(t *testing.T) {
		t.Parallel()
		_, err := NewEngine(nil, retryConfig("R32767/PT1S", map[string]string{"a": "R/PT1S", "b": "R0/PT1S"}))
		require.NoError(t, err)
	})
}

func TestRetryCycleAtInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// MaxAttempts from each form, given by the job definition.
	forms := map[string]struct {
		maxAttempts int
		stored      string
	}{
		"R3/PT1S":             {3, "R3/PT1S"},
		"R0/PT1M":             {1, "R0/PT1M"},
		"R/PT1M":              {MaxAttemptsUnbounded, "R/PT1M"},
		"PT5M":                {2, "PT5M"},
		" PT10M, PT17M,PT20M": {4, "PT10M,PT17M,PT20M"}, // entries trimmed, canonical form stored
		"P1M":                 {2, "P1M"},
		"R7/P1DT0.5S":         {7, "R7/P1DT0.5S"},
	}

	t.Run("Forms", func(t *testing.T) {
		t.Parallel()
		cycles := map[string]string{"none": ""}
		for form := range forms {
			cycles[form] = form
		}
		engine, schema := testEngineWithConfig(t, retryConfig("", cycles))
		client := newInsertClient(t, engine, schema)
		for id := range cycles {
			res, err := client.Insert(ctx, retryArgs{Name: id}, &river.InsertOpts{MaxAttempts: 25, Metadata: mustMetadata(t, jobOf(id, "pi"))})
			require.NoError(t, err)
			jc, err := JobContextOf(res.Job)
			require.NoError(t, err)
			if id == "none" {
				require.Equal(t, 3, res.Job.MaxAttempts, "no cycle: 3 executions, whatever the insert options say")
				require.Empty(t, jc.RetryCycle)
				require.NotContains(t, string(res.Job.Metadata), "retry_cycle")
				continue
			}
			require.Equal(t, forms[id].maxAttempts, res.Job.MaxAttempts, id)
			require.Equal(t, forms[id].stored, jc.RetryCycle, id)
			require.Contains(t, string(res.Job.Metadata), fmt.Sprintf(`"retry": %q`, forms[id].stored), "readable in River UI, labelled")
		}
	})

	// Precedence: job definition > job context > engine default > none, on
	// all six insert calls; plain jobs get the default under their own key.
	t.Run("PrecedenceOnAllSixInsertCalls", func(t *testing.T) {
		t.Parallel()
		for _, call := range sixInsertCalls {
			t.Run(call.name, func(t *testing.T) {
				t.Parallel()
				engine, schema := testEngineWithConfig(t, retryConfig("R5/PT1M", map[string]string{"with": "PT1M,PT2M,PT3M", "without": ""}))
				client := newInsertClient(t, engine, schema)

				given := func(jc JobContext) JobContext { jc.RetryCycle = "R2/PT1S"; return jc }
				args := []river.JobArgs{
					retryArgs{Name: "definition"}, retryArgs{Name: "definition-over-context"},
					retryArgs{Name: "context"}, retryArgs{Name: "default"}, retryArgs{Name: "plain"},
					retryArgs{Name: "plain-max-attempts"},
				}
				opts := []*river.InsertOpts{
					{Metadata: mustMetadata(t, jobOf("with", "pi-1"))},
					{Metadata: mustMetadata(t, given(jobOf("with", "pi-2")))},
					{Metadata: mustMetadata(t, given(jobOf("without", "pi-3")))},
					{Metadata: mustMetadata(t, jobOf("without", "pi-4"))},
					{Metadata: []byte(`{"tenant": "acme"}`)},
					{MaxAttempts: 9, Metadata: []byte(`{"tenant": "acme", "` + RetryCycleMetadataKey + `": "R7/PT1S"}`)},
				}
				require.NoError(t, call.insert(ctx, client, args, opts))

				jobs := jobsByName(ctx, t, engine, schema)
				for name, want := range map[string]struct {
					maxAttempts int
					cycle       string
				}{
					"definition":              {4, "PT1M,PT2M,PT3M"},
					"definition-over-context": {4, "PT1M,PT2M,PT3M"},
					"context":                 {2, "R2/PT1S"},
					"default":                 {5, "R5/PT1M"},
				} {
					job := jobs[name]
					require.Equal(t, want.maxAttempts, job.MaxAttempts, name)
					jc, err := JobContextOf(job)
					require.NoError(t, err)
					require.Equal(t, want.cycle, jc.RetryCycle, name)
				}

				plain := jobs["plain"]
				require.Equal(t, 5, plain.MaxAttempts, "River's default MaxAttempts gives way to the default cycle")
				var metadata map[string]any
				require.NoError(t, json.Unmarshal(plain.Metadata, &metadata))
				require.Equal(t, map[string]any{"tenant": "acme", RetryCycleMetadataKey: "R5/PT1M"}, metadata,
					"recorded under its own key: a plain job does not become a BPMN job")
				_, err := JobContextOf(plain)
				require.ErrorIs(t, err, ErrNoJobContext)

				explicit := jobs["plain-max-attempts"]
				require.Equal(t, 9, explicit.MaxAttempts, "an explicit InsertOpts.MaxAttempts is kept: River's retries, as asked")
				require.JSONEq(t, `{"tenant": "acme"}`, string(explicit.Metadata), "no cycle, and a copied one removed")
			})
		}
	})

	t.Run("PlainJobsWithoutDefaultAreStockRiver", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, retryConfig("", nil))
		client := newInsertClient(t, engine, schema)

		res, err := client.Insert(ctx, retryArgs{Name: "plain"}, &river.InsertOpts{MaxAttempts: 9, Metadata: []byte(`{"tenant":"acme"}`)})
		require.NoError(t, err)
		require.Equal(t, 9, res.Job.MaxAttempts)
		require.JSONEq(t, `{"tenant":"acme"}`, string(res.Job.Metadata))

		res, err = client.Insert(ctx, retryArgs{Name: "default-max"}, nil)
		require.NoError(t, err)
		require.Equal(t, river.MaxAttemptsDefault, res.Job.MaxAttempts)

		// Copied metadata of a job inserted under a default cycle: the key
		// goes, so that it cannot disagree with MaxAttempts.
		res, err = client.Insert(ctx, retryArgs{Name: "copied"}, &river.InsertOpts{Metadata: []byte(`{"bpmn_retry_cycle":"R2/PT1S","x":1}`)})
		require.NoError(t, err)
		require.JSONEq(t, `{"x":1}`, string(res.Job.Metadata))
		require.Equal(t, river.MaxAttemptsDefault, res.Job.MaxAttempts)
	})

	t.Run("ContextWithOnlyACycle", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, retryConfig("R9/PT1M", nil))
		client := newInsertClient(t, engine, schema)
		res, err := client.Insert(ctx, retryArgs{Name: "only-cycle"}, JobContext{RetryCycle: "R2/PT1S"}.InsertOpts())
		require.NoError(t, err)
		require.Equal(t, 2, res.Job.MaxAttempts, "the context's cycle wins over the engine default")
		jc, err := JobContextOf(res.Job)
		require.NoError(t, err)
		require.Equal(t, "R2/PT1S", jc.RetryCycle)

		// River stores any JSON as metadata; with no room for the cycle, the
		// job keeps River's behaviour rather than failing the insert.
		res, err = client.Insert(ctx, retryArgs{Name: "not-an-object"}, &river.InsertOpts{Metadata: []byte(`[1]`)})
		require.NoError(t, err)
		require.Equal(t, river.MaxAttemptsDefault, res.Job.MaxAttempts)
	})

	t.Run("BadCycleInJobContext", func(t *testing.T) {
		t.Parallel()
		engine, schema := testEngineWithConfig(t, retryConfig("", map[string]string{"without": "", "with": "R2/PT1S"}))
		client := newInsertClient(t, engine, schema)
		// Rejected even where the job definition's cycle would win.
		withDefinition := jobOf("with", "pi")
		withDefinition.RetryCycle = "R2/PT1X"
		_, err := client.Insert(ctx, retryArgs{}, &river.InsertOpts{Metadata: mustMetadata(t, withDefinition)})
		require.ErrorContains(t, err, `retry_cycle "R2/PT1X": is not a valid retry time cycle`)
		for value, inError := range map[string]string{
			"R3/PT5.5M":   `retry_cycle "R3/PT5.5M": is not a valid retry time cycle: retrypolicy: invalid retry cycle "R3/PT5.5M"`,
			"R99999/PT1S": `retry_cycle "R99999/PT1S": allows 99999 executions`,
		} {
			jc := jobOf("without", "pi")
			jc.RetryCycle = value
			for _, call := range sixInsertCalls {
				err := call.insert(ctx, client, []river.JobArgs{retryArgs{}}, []*river.InsertOpts{{Metadata: mustMetadata(t, jc)}})
				var ctxErr *JobContextError
				require.ErrorAs(t, err, &ctxErr, call.name)
				require.Equal(t, "retry_cycle", ctxErr.Field)
				require.ErrorContains(t, err, inError, call.name)
			}
		}
		require.Zero(t, countJobs(ctx, t, engine, schema))
	})
}

func mustMetadata(t *testing.T, jc JobContext) []byte {
	t.Helper()
	metadata, err := jc.AddToMetadata(nil)
	require.NoError(t, err)
	return metadata
}

// jobsByName returns every job of the schema by its retryArgs name.
func jobsByName(ctx context.Context, t *testing.T, engine *Engine, schema string) map[string]*rivertype.JobRow {
	t.Helper()
	rows, err := engine.dbPool.Query(ctx, renderSQL("SELECT /* COLUMNS: river_job */ FROM /* TEMPLATE: schema */river_job", schema))
	require.NoError(t, err)
	jobs, decodeErrors, err := scanJobRows(rows)
	require.NoError(t, err)
	require.Empty(t, decodeErrors)
	byName := map[string]*rivertype.JobRow{}
	for _, job := range jobs {
		var args retryArgs
		require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
		byName[args.Name] = job
	}
	return byName
}

// fallbackAt is a retry policy that answers a fixed time, to see when
// RetryPolicy falls back.
type fallbackAt time.Time

func (f fallbackAt) NextRetry(*rivertype.JobRow) time.Time { return time.Time(f) }

func TestRetryPolicyNextRetry(t *testing.T) {
	t.Parallel()

	bpmn := func(cycle string) []byte {
		return []byte(fmt.Sprintf(`{"bpmn": {"process_definition_key": "p", "retry_cycle": %q}}`, cycle))
	}
	fallback := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	policy := &RetryPolicy{Fallback: fallbackAt(fallback)}

	// wait runs the policy for a job that failed its attempt-th execution
	// of maxAttempts.
	wait := func(metadata []byte, attempt, maxAttempts int) time.Duration {
		before := time.Now()
		next := policy.NextRetry(&rivertype.JobRow{Attempt: attempt, MaxAttempts: maxAttempts, Metadata: metadata})
		if next.Equal(fallback) {
			return -1
		}
		return next.Sub(before).Round(100 * time.Millisecond)
	}

	t.Run("IntervalIndexRule", func(t *testing.T) {
		t.Parallel()
		list := bpmn("PT10M,PT17M,PT20M") // N = 3, 4 executions
		cases := []struct {
			attempt, maxAttempts int
			want                 time.Duration
		}{
			{1, 4, 10 * time.Minute}, // 4 left before the failure: index 3-(4-1) = 0
			{2, 4, 17 * time.Minute}, // 3 left: index 1
			{3, 4, 20 * time.Minute}, // 2 left: index 2
			// Retries raised mid-way (SetJobRetries 6 after the first
			// failure, max_attempts 1+6): the FIRST interval until the count
			// is back in the list's range.
			{2, 7, 10 * time.Minute}, // 6 left: index -2, clamped to 0
			{4, 7, 10 * time.Minute}, // 4 left: index 0
			{5, 7, 17 * time.Minute}, // 3 left: index 1
			{6, 7, 20 * time.Minute}, // 2 left: index 2
			{7, 7, 20 * time.Minute}, // 1 left (River discards; clamped to N-1)
		}
		for _, tc := range cases {
			require.Equal(t, tc.want, wait(list, tc.attempt, tc.maxAttempts), "attempt %d of %d", tc.attempt, tc.maxAttempts)
		}
	})

	t.Run("Forms", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, time.Second, wait(bpmn("R3/PT1S"), 1, 3))
		require.Equal(t, time.Second, wait(bpmn("R3/PT1S"), 2, 3))
		require.Equal(t, 5*time.Minute, wait(bpmn("PT5M"), 1, 2))
		require.Equal(t, 90*time.Minute, wait(bpmn("R/PT90M"), 1000, MaxAttemptsUnbounded))
		require.Equal(t, 1500*time.Millisecond, wait(bpmn("R2/PT1.5S"), 1, 2))
		require.Equal(t, 24*time.Hour, wait(bpmn("R2/P1D"), 1, 2))
		require.Equal(t, time.Duration(0), wait([]byte(`{"bpmn": {"process_definition_key": "p"}}`), 1, 3), "no cycle: at once")
		require.Equal(t, 2*time.Second, wait([]byte(`{"bpmn_retry_cycle": "R2/PT2S"}`), 1, 2), "plain job under the default cycle")
	})

	t.Run("FallsBack", func(t *testing.T) {
		t.Parallel()
		for name, metadata := range map[string]string{
			"PlainJob":             `{}`,
			"EmptyMetadata":        ``,
			"OtherMetadata":        `{"tenant": "acme"}`,
			"UnparseableCycle":     `{"bpmn": {"process_definition_key": "p", "retry_cycle": "every now and then"}}`,
			"CycleNotAString":      `{"bpmn": {"process_definition_key": "p", "retry_cycle": 42}}`,
			"ContextNotAnObject":   `{"bpmn": "nope"}`,
			"PlainCycleBad":        `{"bpmn_retry_cycle": "R2"}`,
			"PlainCycleNotAString": `{"bpmn_retry_cycle": ["R2/PT1S"]}`,
			"MetadataNotAnObject":  `[1, 2]`,
		} {
			require.Equal(t, time.Duration(-1), wait([]byte(metadata), 1, 3), name)
		}
	})

	t.Run("BadDataElsewhereInTheContextIsIgnored", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, time.Second, wait([]byte(`{"bpmn": {"process_definition_key": "", "activity_id": 7, "retry_cycle": "R2/PT1S"}}`), 1, 2))
	})

	t.Run("DefaultFallbackIsRivers", func(t *testing.T) {
		t.Parallel()
		job := &rivertype.JobRow{Attempt: 1, MaxAttempts: 25, Metadata: []byte(`{}`)}
		next := (&RetryPolicy{}).NextRetry(job)
		// River's default: (errors+1)^4 seconds, ±10%: about 1 s.
		require.WithinDuration(t, time.Now().Add(time.Second), next, 200*time.Millisecond)
		require.Equal(t, &RetryPolicy{}, (&Engine{}).RetryPolicy())
	})
}

func TestIsConflict(t *testing.T) {
	t.Parallel()
	serialization := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	deadlock := &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
	unique := &pgconn.PgError{Code: "23505", Message: "duplicate key"}

	for name, err := range map[string]error{
		"Sentinel":                 ErrConflict,
		"WrappedSentinel":          fmt.Errorf("joining: %w", ErrConflict),
		"Serialization":            serialization,
		"WrappedDeadlock":          fmt.Errorf("tx: %w", fmt.Errorf("update: %w", deadlock)),
		"JoinedSecondBranch":       errors.Join(errors.New("first"), fmt.Errorf("x: %w", deadlock)),
		"SecondPgErrorInTheChain":  fmt.Errorf("%w; then %w", unique, serialization),
		"SentinelBehindOtherError": fmt.Errorf("%w: %w", errors.New("a"), ErrConflict),
	} {
		require.True(t, IsConflict(err), name)
	}
	for name, err := range map[string]error{
		"Nil":         nil,
		"Plain":       errors.New("boom"),
		"OtherPgCode": fmt.Errorf("insert: %w", unique),
		"Text":        errors.New("40001"),
	} {
		require.False(t, IsConflict(err), name)
	}
}

func TestMigrationTruncateTables(t *testing.T) {
	t.Parallel()
	require.Empty(t, migrationTruncateTables(1))
	require.Equal(t, []string{"river_bpmn_job_definition"}, migrationTruncateTables(2))
	require.Equal(t, []string{"river_bpmn_job_definition"}, migrationTruncateTables(3))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident"}, migrationTruncateTables(4))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident", "river_bpmn_exclusive_lock"}, migrationTruncateTables(5))
	require.Equal(t, []string{"river_bpmn_job_definition", "river_bpmn_incident", "river_bpmn_exclusive_lock", "river_bpmn_timer"}, migrationTruncateTables(migrationVersionTimers))
	require.Equal(t, append(migrationTruncateTables(migrationVersionHoldSuspension), "river_bpmn_client_session"), migrationTruncateTables(livenessMigrationVersion))
	require.Equal(t, append(migrationTruncateTables(livenessMigrationVersion), eventsMigrationTables...), migrationTruncateTables(eventsMigrationVersion))
	require.Equal(t, append(migrationTruncateTables(eventsMigrationVersion), "river_bpmn_dependency", "river_bpmn_dependent", "river_bpmn_expiry"),
		migrationTruncateTables(migrationVersionLifecycle))
	require.Equal(t, migrationTruncateTables(math.MaxInt), migrationTruncateTables(0))
	entries, err := fs.Glob(migrationFS, "migration/riverbpmn/004_incidents.*.sql")
	require.NoError(t, err)
	require.Len(t, entries, 2)
}
