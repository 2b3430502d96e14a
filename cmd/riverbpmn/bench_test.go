package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/stretchr/testify/require"

	"github.com/riverbpmn/riverbpmn/internal/bench"
	"github.com/riverbpmn/riverbpmn/internal/longtest"
)

// benchSchema names a schema for the bench command to create, dropped after
// the test.
func benchSchema(t *testing.T) string {
	t.Helper()
	pool := riversharedtest.DBPool(context.Background(), t)
	schema := fmt.Sprintf("riverbpmn_cli_bench_%d", time.Now().UnixNano())
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return schema
}

// TestBenchCommand runs a tiny benchmark of each kind through the command
// line and checks the JSON document's structure, not its timings.
func TestBenchCommand(t *testing.T) {
	longtest.Skip(t)
	url := riversharedtest.TestDatabaseURL()
	schema := benchSchema(t)

	code, out, errOut := runCLI(t, "bench", "--database-url", url, "--schema", schema, "--json",
		"--jobs", "200", "--workers", "20", "--rounds", "1", "--mode", "none", "--fetch-cooldown", "5ms")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Machine struct {
			CPUs     int    `json:"cpus"`
			Postgres string `json:"postgres"`
		} `json:"machine"`
		Settings struct {
			Jobs            int     `json:"jobs"`
			FetchCooldownMs float64 `json:"fetch_cooldown_ms"`
		} `json:"settings"`
		Throughput []struct {
			Mode      string          `json:"mode"`
			Stock     json.RawMessage `json:"stock"`
			RiverBPMN json.RawMessage `json:"riverbpmn"`
			Ratio     struct {
				JobsPerSecond *float64 `json:"jobs_per_second"`
				FetchP50      *float64 `json:"fetch_p50"`
				FetchP99      *float64 `json:"fetch_p99"`
			} `json:"ratio"`
			MeetsTarget *bool `json:"meets_target"`
		} `json:"throughput"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Positive(t, doc.Machine.CPUs)
	require.Contains(t, doc.Machine.Postgres, "PostgreSQL")
	require.Equal(t, 200, doc.Settings.Jobs)
	require.InDelta(t, 5, doc.Settings.FetchCooldownMs, 1e-9)
	require.Len(t, doc.Throughput, 1)
	res := doc.Throughput[0]
	require.Equal(t, "none", res.Mode)
	for _, side := range []json.RawMessage{res.Stock, res.RiverBPMN} {
		var s struct {
			JobsPerSecond map[string]any `json:"jobs_per_second"`
			FetchLatency  map[string]any `json:"fetch_latency"`
		}
		require.NoError(t, json.Unmarshal(side, &s))
		require.Contains(t, s.JobsPerSecond, "median")
		require.Contains(t, s.JobsPerSecond, "q1")
		require.Contains(t, s.FetchLatency, "p99_ms")
	}
	require.NotNil(t, res.Ratio.JobsPerSecond)
	require.Positive(t, *res.Ratio.JobsPerSecond)
	require.Positive(t, *res.Ratio.FetchP50)
	require.Positive(t, *res.Ratio.FetchP99)
	require.NotNil(t, res.MeetsTarget)
	require.Contains(t, errOut, "round 1/1 none", "progress lines go to stderr")

	// --save writes the run; --compare reads it back and sets a new run
	// against it, mode by mode. A saved ratio far above any real one makes
	// the new run a regression: exit 1, with the comparison printed.
	saved := filepath.Join(t.TempDir(), "run.json")
	code, out, errOut = runCLI(t, "bench", "--database-url", url, "--schema", schema, "--save", saved,
		"--jobs", "200", "--workers", "20", "--rounds", "1", "--mode", "none", "--fetch-cooldown", "5ms")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "jobs/s vs stock")
	report, err := bench.ReadReport(saved)
	require.NoError(t, err)
	require.Len(t, report.Throughput, 1)
	report.Throughput[0].Ratio.JobsPerSecond = 50
	var inflated bytes.Buffer
	require.NoError(t, report.WriteJSON(&inflated))
	high := filepath.Join(t.TempDir(), "high.json")
	require.NoError(t, os.WriteFile(high, inflated.Bytes(), 0o600))
	code, out, errOut = runCLI(t, "bench", "--database-url", url, "--schema", schema, "--compare", high,
		"--jobs", "200", "--workers", "20", "--rounds", "1", "--mode", "none", "--fetch-cooldown", "5ms")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "compared with "+high)
	require.Regexp(t, `none +5000\.0% +\d+\.\d% +-\d+\.\d .*REGRESSED`, out)
	require.Contains(t, errOut, "throughput regressed against "+high)

	code, out, errOut = runCLI(t, "bench", "--database-url", url, "--schema", schema, "--compare", saved, "--compare-tolerance", "10000",
		"--jobs", "200", "--workers", "20", "--rounds", "1", "--mode", "none", "--fetch-cooldown", "5ms")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `none +\d+\.\d% +\d+\.\d% +[-+]\d+\.\d +\d+ B +\d+ B +ok`, out)

	code, out, errOut = runCLI(t, "bench", "--database-url", url, "--schema", schema,
		"--fetch-latency", "--sizes", "1_000", "--samples", "3")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "fetch latency: single fetches of 100 jobs")
	require.Regexp(t, `1000 +\S+ +priority-range-deployment `, out)
}

func TestBenchCommandErrors(t *testing.T) {
	url := riversharedtest.TestDatabaseURL()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "none,sideways"}, `unknown mode "sideways" (known: none, exclusive, camunda, exclusive-batch, camunda-batch, exclusive-one-instance, events, fairness, priority-range-deployment, stock-metadata, stock-metadata-string, priority, exclusive-priority, tenants, telemetry)`},
		{[]string{"--jobs", "0"}, "--jobs must be positive, got 0"},
		{[]string{"--work-ms", "-1"}, "--work-ms must not be negative"},
		{[]string{"--sizes", "10,x"}, `"x" is not a positive integer`},
		{[]string{"--fetch-latency", "--sizes", "50"}, "fetch latency size 50 is smaller than one fetch (100 jobs)"},
		{[]string{"--schema", ""}, "--schema must not be empty"},
		{[]string{"--compare", "/nonexistent/run.json"}, "reading the saved run: open /nonexistent/run.json"},
		{[]string{"--compare", "/dev/null"}, "saved run /dev/null: not a bench --json report"},
		{[]string{"--compare-tolerance", "-1"}, "--compare-tolerance must not be negative, got -1"},
		{[]string{"--priority-levels", "202"}, "priority levels must be within [0, 201], got 202"},
		{[]string{"--priority-levels", "-1"}, "priority levels must be within [0, 201], got -1"},
	} {
		code, _, errOut := runCLI(t, append([]string{"bench", "--database-url", url}, tt.args...)...)
		require.Equal(t, exitUsage, code, "%v", tt.args)
		require.Contains(t, errOut, tt.want, "%v", tt.args)
	}
}
