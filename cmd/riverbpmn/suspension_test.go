package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"
)

// TestSuspensionCommands runs suspend, activate and suspended end to end
// against PostgreSQL, on jobs written as the engine writes them.
func TestSuspensionCommands(t *testing.T) {
	ctx := context.Background()
	url, schema := migratedSchema(t)

	pool := riversharedtest.DBPool(ctx, t)
	table := pgx.Identifier{schema, "river_job"}.Sanitize()
	_, err := pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (args, kind, max_attempts, metadata, priority, queue, state)
		VALUES ('{}', 'k', 3, '{"bpmn": {"process_definition_key": "p", "job_definition_id": "jd", "process_instance_id": "pi-1"}}', 1, 'default', 'available'),
		       ('{}', 'k', 3, '{}', 1, 'default', 'available')`, table))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (id, process_definition_key, activity_id, kind) VALUES ('jd', 'p', 'a', 'k')`,
		pgx.Identifier{schema, "river_bpmn_job_definition"}.Sanitize()))
	require.NoError(t, err)
	var bpmnJob, plainJob int64
	require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT min(id), max(id) FROM %s`, table)).Scan(&bpmnJob, &plainJob))
	state := func(id int64) string {
		var s string
		require.NoError(t, pool.QueryRow(ctx, fmt.Sprintf(`SELECT state FROM %s WHERE id = $1`, table), id).Scan(&s))
		return s
	}
	db := []string{"--database-url", url, "--schema", schema}

	code, out, errOut := runCLI(t, append([]string{"suspensions", "suspend", "--job-definition", "jd", "--include-jobs", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	var res struct {
		Action, Target, ID string
		Result             struct {
			Changed bool
			Jobs    int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "suspend", res.Action)
	require.Equal(t, "job_definition", res.Target)
	require.True(t, res.Result.Changed)
	require.EqualValues(t, 1, res.Result.Jobs)
	require.Equal(t, "pending", state(bpmnJob))

	code, out, errOut = runCLI(t, append([]string{"suspensions", "list"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `job_definition\s+jd\s+\d{4}-`, out)

	code, out, errOut = runCLI(t, append([]string{"suspensions", "activate", "--job-definition", "jd", "--include-jobs"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `job_definition "jd": activated`)
	require.Contains(t, out, "activated 1 jobs in 1 batches")
	require.Equal(t, "available", state(bpmnJob))

	code, out, errOut = runCLI(t, append([]string{"suspensions", "suspend", "--process-instance", "pi-1"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `process_instance "pi-1": suspended`)
	require.Equal(t, "pending", state(bpmnJob))
	code, _, errOut = runCLI(t, append([]string{"suspensions", "activate", "--process-instance", "pi-1"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "available", state(bpmnJob))

	code, out, errOut = runCLI(t, append([]string{"suspensions", "suspend", "--job", fmt.Sprint(plainJob), "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"changed": true`)
	require.Equal(t, "pending", state(plainJob))
	code, out, errOut = runCLI(t, append([]string{"suspensions", "activate", "--job", fmt.Sprint(plainJob)}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, fmt.Sprintf("activated job %d", plainJob))
	require.Equal(t, "available", state(plainJob))

	code, out, errOut = runCLI(t, append([]string{"suspensions", "suspend", "--process-definition", "p", "--at", time.Now().Add(time.Hour).Format(time.RFC3339)}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "scheduled: suspend process_definition \"p\"")
	code, out, errOut = runCLI(t, append([]string{"suspensions", "scheduled", "--json"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"suspend": true`)
	code, out, errOut = runCLI(t, append([]string{"suspensions", "scheduled"}, db...)...)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `suspend\s+process_definition p\s+\d{4}-`, out)

	// Unknown ids: exit code 3, naming the id.
	for _, args := range [][]string{
		{"suspensions", "suspend", "--job-definition", "nope"},
		{"suspensions", "activate", "--process-definition", "nope"},
		{"suspensions", "suspend", "--process-instance", "nope"},
		{"suspensions", "activate", "--job", "99999999"},
	} {
		code, _, errOut = runCLI(t, append(args, db...)...)
		require.Equal(t, exitNotFound, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, args[3])
	}
	code, _, errOut = runCLI(t, append([]string{"suspensions", "suspend"}, db...)...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "give exactly one of")
}
