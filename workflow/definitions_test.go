package workflow

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

func TestDefinitionsRejectedAtConfigTime(t *testing.T) {
	t.Parallel()
	process := ProcessDefinition{Key: "order"}
	job := func(mod func(*JobDefinition)) JobDefinition {
		def := JobDefinition{ID: "ship", ProcessDefinitionKey: "order", ActivityID: "ship", Kind: "ship_order"}
		mod(&def)
		return def
	}
	cases := []struct {
		name      string
		processes []ProcessDefinition
		jobs      []JobDefinition
		want      string
	}{
		{"ProcessKeyEmpty", []ProcessDefinition{{}}, nil,
			`workflow: process definition 0: Key "": is required and must not be empty`},
		{"ProcessTwice", []ProcessDefinition{process, process}, nil,
			`workflow: process definition "order": Key "order": is declared twice`},
		{"ProcessDeploymentControl", []ProcessDefinition{{Key: "p", DeploymentID: "d\n"}}, nil,
			`workflow: process definition "p": DeploymentID "d\n": contains control character U+000A`},
		{"JobIDEmpty", []ProcessDefinition{process}, []JobDefinition{job(func(d *JobDefinition) { d.ID = "" })},
			`workflow: job definition 0: ID "": is required and must not be empty`},
		{"JobKindMissing", []ProcessDefinition{process}, []JobDefinition{job(func(d *JobDefinition) { d.Kind = "" })},
			`workflow: job definition "ship": Kind "": is required and must not be empty`},
		{"JobTwice", []ProcessDefinition{process}, []JobDefinition{job(func(*JobDefinition) {}), job(func(*JobDefinition) {})},
			`workflow: job definition "ship": ID "ship": is declared twice`},
		{"UndeclaredProcess", []ProcessDefinition{process}, []JobDefinition{job(func(d *JobDefinition) { d.ProcessDefinitionKey = "invoice" })},
			`workflow: job definition "ship": ProcessDefinitionKey "invoice": is not a declared process definition`},
		{"BadRetryCycle", []ProcessDefinition{process}, []JobDefinition{job(func(d *JobDefinition) { d.RetryCycle = "R3/PT5X" })},
			`workflow: job definition "ship": RetryCycle "R3/PT5X": is not a valid retry time cycle: `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewEngine(nil, &Config{ProcessDefinitions: tc.processes, JobDefinitions: tc.jobs})
			var defErr *DefinitionError
			require.ErrorAs(t, err, &defErr)
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("RetryCycleErrorUnwraps", func(t *testing.T) {
		t.Parallel()
		_, err := NewEngine(nil, &Config{ProcessDefinitions: []ProcessDefinition{process},
			JobDefinitions: []JobDefinition{job(func(d *JobDefinition) { d.RetryCycle = "pt5m" })}})
		require.ErrorIs(t, err, retrypolicy.ErrInvalid)
	})

	t.Run("Valid", func(t *testing.T) {
		t.Parallel()
		engine, err := NewEngine(nil, &Config{ProcessDefinitions: []ProcessDefinition{process},
			JobDefinitions: []JobDefinition{job(func(d *JobDefinition) { d.RetryCycle = "PT10M,PT17M,PT20M" })}})
		require.NoError(t, err)
		require.Equal(t, "PT10M,PT17M,PT20M", engine.defs.retryCycles["ship"].String())
	})
}
