package retrypolicy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/insertcalls"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// TestRetryCycleRejectedAtNewEngine: a cycle that does not parse, or allows
// more executions than River's max_attempts holds, fails NewEngine with a
// *workflow.DefinitionError naming the definition, the field and the value;
// the limits themselves are accepted.
func TestRetryCycleRejectedAtNewEngine(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name    string
		config  *workflow.Config
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
			`workflow: engine config: Retry.DefaultCycle "PT5M,,PT1M": is not a valid retry time cycle: retrypolicy: invalid retry cycle "PT5M,,PT1M": entry 2 is empty`, true},
		{"DefaultLowerCase", retryConfig("r3/pt1s", nil),
			`workflow: engine config: Retry.DefaultCycle "r3/pt1s": is not a valid retry time cycle`, true},
		{"DefaultTooManyExecutions", retryConfig("R32768/PT1S", nil),
			`workflow: engine config: Retry.DefaultCycle "R32768/PT1S": allows 32768 executions`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := workflow.NewEngine(nil, tc.config)
			require.ErrorContains(t, err, tc.inError)
			var defErr *workflow.DefinitionError
			require.ErrorAs(t, err, &defErr)
			require.Equal(t, tc.invalid, errors.Is(err, retrypolicy.ErrInvalid))
		})
	}

	t.Run("LimitsAccepted", func(t *testing.T) {
		t.Parallel()
		_, err := workflow.NewEngine(nil, retryConfig("R32767/PT1S", map[string]string{"a": "R/PT1S", "b": "R0/PT1S"}))
		require.NoError(t, err)
	})
}

// TestRetryCycleAtInsert: the engine's insert middleware records each job's
// cycle in canonical form and sets River's MaxAttempts from it, by Camunda's
// precedence, on all six insert calls; plain River jobs keep River's
// behaviour unless a default cycle applies to them.
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
		"R/PT1M":              {retrypolicy.MaxAttemptsUnbounded, "R/PT1M"},
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
		client := testEngine(t, retryConfig("", cycles)).Client
		for id := range cycles {
			res, err := client.Insert(ctx, retryArgs{Name: id}, &river.InsertOpts{MaxAttempts: 25, Metadata: mustMetadata(t, jobOf(id, "pi"))})
			require.NoError(t, err)
			jc, err := workflow.JobContextOf(res.Job)
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
		for _, call := range insertcalls.Six {
			t.Run(call.Name, func(t *testing.T) {
				t.Parallel()
				client := testEngine(t, retryConfig("R5/PT1M", map[string]string{"with": "PT1M,PT2M,PT3M", "without": ""})).Client

				given := func(jc workflow.JobContext) workflow.JobContext { jc.RetryCycle = "R2/PT1S"; return jc }
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
					{MaxAttempts: 9, Metadata: []byte(`{"tenant": "acme", "` + retrypolicy.CycleMetadataKey + `": "R7/PT1S"}`)},
				}
				require.NoError(t, call.Insert(ctx, client, args, opts))

				jobs := jobsByName(ctx, t, client)
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
					jc, err := workflow.JobContextOf(job)
					require.NoError(t, err)
					require.Equal(t, want.cycle, jc.RetryCycle, name)
				}

				plain := jobs["plain"]
				require.Equal(t, 5, plain.MaxAttempts, "River's default MaxAttempts gives way to the default cycle")
				var metadata map[string]any
				require.NoError(t, json.Unmarshal(plain.Metadata, &metadata))
				require.Equal(t, map[string]any{"tenant": "acme", retrypolicy.CycleMetadataKey: "R5/PT1M"}, metadata,
					"recorded under its own key: a plain job does not become a BPMN job")
				_, err := workflow.JobContextOf(plain)
				require.ErrorIs(t, err, workflow.ErrNoJobContext)

				explicit := jobs["plain-max-attempts"]
				require.Equal(t, 9, explicit.MaxAttempts, "an explicit InsertOpts.MaxAttempts is kept: River's retries, as asked")
				require.JSONEq(t, `{"tenant": "acme"}`, string(explicit.Metadata), "no cycle, and a copied one removed")
			})
		}
	})

	t.Run("PlainJobsWithoutDefaultAreStockRiver", func(t *testing.T) {
		t.Parallel()
		client := testEngine(t, retryConfig("", nil)).Client

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
		client := testEngine(t, retryConfig("R9/PT1M", nil)).Client
		res, err := client.Insert(ctx, retryArgs{Name: "only-cycle"}, workflow.JobContext{RetryCycle: "R2/PT1S"}.InsertOpts())
		require.NoError(t, err)
		require.Equal(t, 2, res.Job.MaxAttempts, "the context's cycle wins over the engine default")
		jc, err := workflow.JobContextOf(res.Job)
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
		client := testEngine(t, retryConfig("", map[string]string{"without": "", "with": "R2/PT1S"})).Client
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
			for _, call := range insertcalls.Six {
				err := call.Insert(ctx, client, []river.JobArgs{retryArgs{}}, []*river.InsertOpts{{Metadata: mustMetadata(t, jc)}})
				var ctxErr *workflow.JobContextError
				require.ErrorAs(t, err, &ctxErr, call.Name)
				require.Equal(t, "retry_cycle", ctxErr.Field)
				require.ErrorContains(t, err, inError, call.Name)
			}
		}
		require.Empty(t, allJobs(ctx, t, client))
	})
}

// TestResolveCycle: a job's cycle is its job definition's, else its job
// context's, else the engine's default, else none; a given cycle that
// cannot be used is reported even when the job definition's would win.
func TestResolveCycle(t *testing.T) {
	t.Parallel()
	mustParse := func(s string) retrypolicy.Cycle {
		cycle, err := retrypolicy.ParseCycle(s)
		require.NoError(t, err)
		return cycle
	}
	definition, engineDefault := mustParse("PT1M,PT2M"), mustParse("R5/PT1M")

	for name, tc := range map[string]struct {
		definition    retrypolicy.Cycle
		given         string
		engineDefault retrypolicy.Cycle
		want          string
	}{
		"DefinitionOverContext": {definition, "R2/PT1S", engineDefault, "PT1M,PT2M"},
		"ContextOverDefault":    {retrypolicy.Cycle{}, " R2/PT1S ", engineDefault, "R2/PT1S"},
		"Default":               {retrypolicy.Cycle{}, "", engineDefault, "R5/PT1M"},
		"None":                  {retrypolicy.Cycle{}, "", retrypolicy.Cycle{}, ""},
	} {
		cycle, problem := retrypolicy.ResolveCycle(tc.definition, tc.given, tc.engineDefault)
		require.Empty(t, problem, name)
		require.Equal(t, tc.want, cycle.String(), name)
	}
	require.Equal(t, 3, retrypolicy.MaxAttempts(retrypolicy.Cycle{}), "no cycle: 3 executions")

	_, problem := retrypolicy.ResolveCycle(definition, "R2/PT1X", engineDefault)
	require.Contains(t, problem, `is not a valid retry time cycle: retrypolicy: invalid retry cycle "R2/PT1X"`)
	_, problem = retrypolicy.ResolveCycle(definition, "R99999/PT1S", engineDefault)
	require.Equal(t, "allows 99999 executions, more than River's max_attempts holds (32767); use R/<duration> for unbounded retries", problem)
}

// TestApplyDefaultCycle: a plain job left at River's default MaxAttempts
// gets the engine's default cycle under CycleMetadataKey; without a default
// cycle and without the key, not a byte of the insert changes.
func TestApplyDefaultCycle(t *testing.T) {
	t.Parallel()
	engineDefault, err := retrypolicy.ParseCycle("R4/PT1S")
	require.NoError(t, err)

	t.Run("Default", func(t *testing.T) {
		t.Parallel()
		params := &rivertype.JobInsertParams{MaxAttempts: river.MaxAttemptsDefault, Metadata: []byte(`{"tenant": "acme"}`)}
		require.NoError(t, retrypolicy.ApplyDefaultCycle(params, engineDefault))
		require.Equal(t, 4, params.MaxAttempts)
		require.JSONEq(t, `{"tenant": "acme", "bpmn_retry_cycle": "R4/PT1S"}`, string(params.Metadata))
	})

	t.Run("NoDefaultIsStockRiver", func(t *testing.T) {
		t.Parallel()
		metadata := []byte(`{ "tenant" : "acme" }`)
		params := &rivertype.JobInsertParams{MaxAttempts: 7, Metadata: metadata}
		require.NoError(t, retrypolicy.ApplyDefaultCycle(params, retrypolicy.Cycle{}))
		require.Equal(t, 7, params.MaxAttempts)
		require.Equal(t, string(metadata), string(params.Metadata), "not a byte changed")
	})

	t.Run("ChosenMaxAttemptsKept", func(t *testing.T) {
		t.Parallel()
		params := &rivertype.JobInsertParams{MaxAttempts: 9, Metadata: []byte(`{"bpmn_retry_cycle": "R2/PT1S", "x": 1}`)}
		require.NoError(t, retrypolicy.ApplyDefaultCycle(params, engineDefault))
		require.Equal(t, 9, params.MaxAttempts)
		require.JSONEq(t, `{"x": 1}`, string(params.Metadata), "a copied cycle is removed")
	})

	t.Run("MetadataNotAnObject", func(t *testing.T) {
		t.Parallel()
		params := &rivertype.JobInsertParams{MaxAttempts: river.MaxAttemptsDefault, Metadata: []byte(`[1]`)}
		require.NoError(t, retrypolicy.ApplyDefaultCycle(params, engineDefault))
		require.Equal(t, river.MaxAttemptsDefault, params.MaxAttempts)
		require.Equal(t, `[1]`, string(params.Metadata))
	})
}
