// Package bench measures riverbpmn against stock River on one database, in
// the same run: job throughput with each riverbpmn mode (Modes) against stock
// River in alternation, and the latency of single fetches with large backlogs
// of available jobs. It backs the `riverbpmn bench` command.
//
// Absolute numbers depend on the machine and on whatever else runs on it; the
// ratios to stock River, measured round by round under the same conditions,
// are what the benchmark is for.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/internal/buildinfo"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Options configure a benchmark run. The zero value of a field means its
// default (DefaultOptions).
type Options struct {
	// Schema holds River's and riverbpmn's tables for the benchmark. It is
	// created and migrated if needed; its river_job table is emptied before
	// every run, so it must be a schema of its own.
	Schema string

	// Jobs is the size of the queued backlog each throughput run works off;
	// zero means each mode's own default (Mode.Jobs), else DefaultOptions.Jobs.
	Jobs int
	// Workers is the queue's MaxWorkers.
	Workers int
	// Rounds is the number of stock/riverbpmn pairs per mode.
	Rounds int
	// Work is how long each job sleeps; zero is a trivial work function.
	Work time.Duration
	// Modes are the names of the modes to run; empty means all (Modes).
	Modes []string
	// Instances is the number of process instances the "exclusive" mode
	// spreads its jobs over.
	Instances int
	// PriorityLevels is the number of distinct priorities of the jobs
	// (Workload.PriorityLevels): zero scatters them over the whole range,
	// 1 gives every job priority 0.
	PriorityLevels int
	// FetchCooldown and FetchPollInterval are the clients' (both sides);
	// zero means River's defaults.
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
	// InsertBatch is the batch size of the InsertManyFast calls that queue
	// the backlog.
	InsertBatch int
	// RunTimeout bounds one throughput run.
	RunTimeout time.Duration

	// FetchLatency runs the fetch latency benchmark instead of the
	// throughput benchmark.
	FetchLatency bool
	// Sizes are the backlog sizes (available jobs) of the fetch latency
	// benchmark.
	Sizes []int
	// Samples is the number of fetches timed per variant and size.
	Samples int

	// InsertCost measures what the head-of-key indexes by priority
	// (migration riverbpmn/010) cost the insert of exclusive jobs, instead
	// of the throughput benchmark.
	InsertCost bool

	// InsertCostIndexes, when set, are the indexes InsertCost measures
	// instead of the head-of-key indexes by priority (such as the tenant
	// indexes of migration riverbpmn/011).
	InsertCostIndexes []string

	// Statements, when set, prints on Progress after every run the
	// statements that took the most server time (pg_stat_statements),
	// per job: where a side's time goes.
	Statements int

	// Progress receives progress lines; nil discards them.
	Progress io.Writer

	// noCheckpoint is set once CHECKPOINT was refused.
	noCheckpoint bool
	// statsSchema is where pg_stat_statements is installed ("" when the
	// server does not load it: no server times then); statsChecked says
	// it was looked up.
	statsSchema  string
	statsChecked bool
}

// DefaultOptions are the command's defaults.
var DefaultOptions = Options{
	Schema:            "riverbpmn_bench",
	Jobs:              20_000,
	Workers:           100,
	Rounds:            5,
	Instances:         1_000,
	FetchCooldown:     river.FetchCooldownDefault,
	FetchPollInterval: river.FetchPollIntervalDefault,
	InsertBatch:       5_000,
	RunTimeout:        10 * time.Minute,
	Sizes:             []int{10_000, 100_000, 1_000_000},
	Samples:           200,
}

func (o Options) withDefaults() Options {
	d := DefaultOptions
	if o.Schema == "" {
		o.Schema = d.Schema
	}
	if o.Workers == 0 {
		o.Workers = d.Workers
	}
	if o.Rounds == 0 {
		o.Rounds = d.Rounds
	}
	if o.Instances == 0 {
		o.Instances = d.Instances
	}
	if o.FetchCooldown == 0 {
		o.FetchCooldown = d.FetchCooldown
	}
	if o.FetchPollInterval == 0 {
		o.FetchPollInterval = d.FetchPollInterval
	}
	if o.InsertBatch == 0 {
		o.InsertBatch = d.InsertBatch
	}
	if o.RunTimeout == 0 {
		o.RunTimeout = d.RunTimeout
	}
	if len(o.Sizes) == 0 {
		o.Sizes = d.Sizes
	}
	if o.Samples == 0 {
		o.Samples = d.Samples
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Validate reports an option out of range, naming it.
func (o *Options) Validate() error {
	switch {
	case o.Jobs < 0:
		return fmt.Errorf("jobs must be positive, got %d", o.Jobs)
	case o.Workers < 0:
		return fmt.Errorf("workers must be positive, got %d", o.Workers)
	case o.Rounds < 0:
		return fmt.Errorf("rounds must be positive, got %d", o.Rounds)
	case o.Work < 0:
		return fmt.Errorf("work must not be negative, got %s", o.Work)
	case o.PriorityLevels < 0 || o.PriorityLevels > PriorityMax-PriorityMin+1:
		return fmt.Errorf("priority levels must be within [0, %d], got %d", PriorityMax-PriorityMin+1, o.PriorityLevels)
	case o.Samples < 0:
		return fmt.Errorf("samples must be positive, got %d", o.Samples)
	case o.InsertBatch < 0:
		return fmt.Errorf("insert batch must be positive, got %d", o.InsertBatch)
	case o.FetchCooldown < 0 || o.FetchPollInterval < 0:
		return errors.New("fetch cooldown and poll interval must not be negative")
	}
	for _, size := range o.Sizes {
		if size < fetchSize {
			return fmt.Errorf("fetch latency size %d is smaller than one fetch (%d jobs)", size, fetchSize)
		}
	}
	if _, err := selectModes(o.Modes); err != nil {
		return err
	}
	return nil
}

// Report is the outcome of a benchmark run; the command prints it as a
// table or, with --json, as JSON.
type Report struct {
	// Machine is where it ran.
	Machine Machine `json:"machine"`
	// Settings are the options the run used.
	Settings Settings `json:"settings"`
	// Throughput has one entry per mode (throughput benchmark).
	Throughput []ModeResult `json:"throughput,omitempty"`
	// FetchLatency has one entry per backlog size (fetch latency
	// benchmark).
	FetchLatency []SizeResult `json:"fetch_latency,omitempty"`
	// InsertCost is the insert cost benchmark's result.
	InsertCost *InsertCostResult `json:"insert_cost,omitempty"`
	// Comparison sets the throughput against a saved run's (bench
	// --compare).
	Comparison *Comparison `json:"comparison,omitempty"`
}

// Machine identifies the machine and software a report was measured on.
type Machine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	River      string `json:"river"`
	Postgres   string `json:"postgres"`
	// LoadAverage is /proc/loadavg at the start (Linux), to tell a shared
	// machine.
	LoadAverage string `json:"load_average,omitempty"`
}

// Settings are a report's options.
type Settings struct {
	Schema              string  `json:"schema"`
	Jobs                int     `json:"jobs,omitempty"`
	Workers             int     `json:"workers,omitempty"`
	Rounds              int     `json:"rounds,omitempty"`
	WorkMs              float64 `json:"work_ms"`
	FetchCooldownMs     float64 `json:"fetch_cooldown_ms,omitempty"`
	FetchPollIntervalMs float64 `json:"fetch_poll_interval_ms,omitempty"`
	Sizes               []int   `json:"sizes,omitempty"`
	Samples             int     `json:"samples,omitempty"`
	FetchSize           int     `json:"fetch_size,omitempty"`
	// PriorityLevels is Options.PriorityLevels (absent: scattered over the
	// whole range).
	PriorityLevels int `json:"priority_levels,omitempty"`
}

// Run prepares the schema and runs the benchmark opts ask for.
func Run(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := prepareSchema(ctx, pool, opts.Schema); err != nil {
		return nil, err
	}
	machine, err := readMachine(ctx, pool)
	if err != nil {
		return nil, err
	}
	report := &Report{Machine: machine, Settings: Settings{Schema: opts.Schema, WorkMs: ms(opts.Work), PriorityLevels: opts.PriorityLevels}}
	fmt.Fprintf(opts.Progress, "bench: %d CPUs, %s, load average %s\n", machine.CPUs, machine.Postgres, orUnknown(machine.LoadAverage))

	if opts.FetchLatency {
		report.Settings.Sizes = opts.Sizes
		report.Settings.Samples = opts.Samples
		report.Settings.FetchSize = fetchSize
		report.FetchLatency, err = runFetchLatency(ctx, pool, &opts)
		return report, err
	}
	if opts.InsertCost {
		report.Settings.Rounds = opts.Rounds
		report.InsertCost, err = runInsertCost(ctx, pool, &opts)
		return report, err
	}
	report.Settings.Jobs = opts.Jobs
	report.Settings.Workers = opts.Workers
	report.Settings.Rounds = opts.Rounds
	report.Settings.FetchCooldownMs = ms(opts.FetchCooldown)
	report.Settings.FetchPollIntervalMs = ms(opts.FetchPollInterval)
	report.Throughput, err = runThroughput(ctx, pool, &opts)
	return report, err
}

// prepareSchema creates schema if needed and applies River's and
// riverbpmn's migrations (idempotent).
func prepareSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("creating schema %q: %w", schema, err)
	}
	if _, err := workflow.MigrateUp(ctx, pool, &workflow.MigrateOpts{Schema: schema}); err != nil {
		return err
	}
	return restoreIndexes(ctx, pool, schema)
}

func readMachine(ctx context.Context, pool *pgxpool.Pool) (Machine, error) {
	m := Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	versions := buildinfo.Read()
	m.Go, m.River = runtime.Version(), versions.River
	if err := pool.QueryRow(ctx, "SELECT version()").Scan(&m.Postgres); err != nil {
		return m, fmt.Errorf("reading the server version: %w", err)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fields := strings.Fields(string(b))
		if len(fields) >= 3 {
			m.LoadAverage = strings.Join(fields[:3], " ")
		}
	}
	return m, nil
}

// riverLogger is the clients' logger: warnings and errors only, to progress.
func riverLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// table returns the schema-qualified name of table.
func table(schema, name string) string {
	return pgx.Identifier{schema, name}.Sanitize()
}
