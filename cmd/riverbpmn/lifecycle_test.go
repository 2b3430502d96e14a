package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"
)

// TestLifecycleCommands runs queue and deps end to end against PostgreSQL.
func TestLifecycleCommands(t *testing.T) {
	ctx := context.Background()
	url := riversharedtest.TestDatabaseURL()
	schema := newSchema(t)
	code, _, errOut := runCLI(t, "migrate", "up", "--database-url", url, "--schema", schema)
	require.Equal(t, 0, code, errOut)

	pool := riversharedtest.DBPool(ctx, t)
	table := pgx.Identifier{schema, "river_job"}.Sanitize()
	insert := func(metadata string) int64 {
		var id int64
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %s (args, kind, max_attempts, metadata, priority, queue, state)
			VALUES ('{}', 'k', 3, $1, 1, 'default', 'available') RETURNING id`, table), metadata).Scan(&id))
		return id
	}
	state := func(id int64) string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT state FROM %s WHERE id = $1`, table), id).Scan(&s))
		return s
	}
	db := []string{"--database-url", url, "--schema", schema}

	a := insert(`{"bpmn": {"process_definition_key": "p", "process_instance_id": "pi-1"}, "bpmn_lifecycle": {"pending": true}}`)
	b := insert(`{"bpmn_lifecycle": {"pending": true}}`)
	dep := insert(fmt.Sprintf(`{"bpmn_lifecycle": {"depends_on": [%d, %d]}}`, a, b))
	require.Equal(t, "pending", state(a))

	code, out, errOut := runCLI(t, append([]string{"jobs", "deps", "--json"}, append(db, fmt.Sprint(dep))...)...)
	require.Equal(t, 0, code, errOut)
	var progress struct {
		State, Reasons any
		Done, Total    int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &progress))
	require.Equal(t, 0, progress.Done)
	require.Equal(t, 2, progress.Total)
	require.Equal(t, []any{"prerequisites"}, progress.Reasons)

	code, out, errOut = runCLI(t, append(append([]string{"queue"}, db...), fmt.Sprint(b), fmt.Sprint(dep))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, fmt.Sprintf("job %d: queued, now available", b))
	require.Contains(t, out, fmt.Sprintf("job %d: not pending", dep))
	require.Equal(t, "available", state(b))

	code, out, errOut = runCLI(t, append([]string{"queue", "--json", "--process-instance", "pi-1"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"outcome": "queued"`)
	require.Equal(t, "available", state(a))

	// Completing both prerequisites releases the dependent.
	_, err := pool.Exec(ctx, fmt.Sprintf(`UPDATE %s SET state = 'completed', finalized_at = now() WHERE id IN ($1, $2)`, table), a, b)
	require.NoError(t, err)
	require.Equal(t, "available", state(dep))
	code, out, errOut = runCLI(t, append(append([]string{"jobs", "deps"}, db...), fmt.Sprint(dep))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "prerequisites: 2 of 2 done, 0 blocked")
	code, out, errOut = runCLI(t, append(append([]string{"jobs", "deps"}, db...), fmt.Sprint(a))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "dependents: 1 (0 still waiting for it)")

	// Unknown ids: exit code 3, the id named.
	code, _, errOut = runCLI(t, append(append([]string{"queue"}, db...), "99999999")...)
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "99999999")
	code, _, errOut = runCLI(t, append(append([]string{"jobs", "deps"}, db...), "99999999")...)
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "99999999")
	code, _, errOut = runCLI(t, append([]string{"queue", "--process-instance", "nope"}, db...)...)
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "nope")
}
