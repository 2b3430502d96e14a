package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFairnessCommands: fairness-enable creates the tenant indexes (JSON
// says so), fairness-disable drops them; both are idempotent.
func TestFairnessCommands(t *testing.T) {
	t.Parallel()
	url, schema := migratedSchema(t)
	db := []string{"--database-url", url, "--schema", schema}

	for range 2 {
		code, out, errOut := runCLI(t, append([]string{"fairness-enable", "--json"}, db...)...)
		require.Equal(t, exitOK, code, errOut)
		require.JSONEq(t, `{"tenant_fairness_indexes": true}`, out)
	}
	code, out, errOut := runCLI(t, append([]string{"fairness-disable"}, db...)...)
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "tenant fairness indexes: absent\n", out)
}
