package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/internal/bench"
)

// benchPoolMaxConns is the pool size when --database-url does not set
// pool_max_conns: pgx's default (4 on two cores) would starve a client with
// 100 workers and a parallel load.
const benchPoolMaxConns = 20

func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db         dbFlags
		opts       = bench.DefaultOptions
		modes      listFlag
		sizes      intListFlag
		workMs     int
		jsonOut    bool
		cpuProfile string
		compare    string
		tolerance  float64
		save       string
		fs         = newFlagSet("bench")
		defaults   = bench.DefaultOptions
	)
	db.register(fs)
	fs.Lookup("schema").DefValue = defaults.Schema
	db.schema = defaults.Schema
	fs.Lookup("schema").Usage = "schema for the benchmark's tables, created and migrated if needed; its river_job is emptied between runs"
	fs.IntVar(&opts.Jobs, "jobs", defaults.Jobs, "queued backlog of each throughput run, inserted before timing, for every mode "+
		"(when not given: this default, but 10000 for the exclusive and camunda modes and 2000 for exclusive-one-instance)")
	fs.IntVar(&opts.Workers, "workers", defaults.Workers, "MaxWorkers of the queue")
	fs.IntVar(&opts.Rounds, "rounds", defaults.Rounds, "stock/riverbpmn pairs per mode")
	fs.IntVar(&opts.Instances, "instances", defaults.Instances, "process instances the exclusive mode spreads its jobs over")
	fs.IntVar(&opts.PriorityLevels, "priority-levels", 0, fmt.Sprintf("distinct job priorities, spread over [%d, %d] (0: every priority of the range, scattered, so an instance's jobs all differ; 1: every job priority 0, Camunda's default)", bench.PriorityMin, bench.PriorityMax))
	fs.IntVar(&workMs, "work-ms", 0, "milliseconds each job sleeps (0: trivial work function)")
	fs.Var(&modes, "mode", fmt.Sprintf("riverbpmn mode to measure, repeatable or comma separated (known: %s; default: all but the diagnostic ones)", strings.Join(bench.ModeNames(), ", ")))
	fs.IntVar(&opts.Statements, "statements", 0, "after every run, print the `n` statements that took the most server time per job (pg_stat_statements)")
	fs.DurationVar(&opts.FetchCooldown, "fetch-cooldown", defaults.FetchCooldown, "river.Config.FetchCooldown of both sides")
	fs.DurationVar(&opts.FetchPollInterval, "fetch-poll-interval", defaults.FetchPollInterval, "river.Config.FetchPollInterval of both sides")
	fs.BoolVar(&opts.FetchLatency, "fetch-latency", false, "time single fetches of 100 jobs with large backlogs instead of throughput")
	fs.Var((*listFlag)(&opts.InsertCostIndexes), "insert-cost-indexes", "indexes --insert-cost measures, comma separated (default: migration 010's; river_bpmn_fetch_tenant,river_bpmn_fetch_tenant_p for fairness, after fairness-enable and fairness-enable --by-priority)")
	fs.BoolVar(&opts.InsertCost, "insert-cost", false, "time queueing --jobs exclusive jobs (--rounds samples) with and without the head-of-key indexes by priority (migration 010) instead of throughput")
	sizes = intListFlag(defaults.Sizes)
	fs.Var(&sizes, "sizes", "backlog sizes (available jobs) for --fetch-latency, comma separated")
	fs.IntVar(&opts.Samples, "samples", defaults.Samples, "fetches timed per variant and size with --fetch-latency")
	fs.BoolVar(&jsonOut, "json", false, "print one JSON document on stdout instead of tables")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&compare, "compare", "", "a saved run (bench --json, or --save) to compare this run's throughput ratios with; exits 1 if a mode's ratio fell by more than --compare-tolerance")
	fs.Float64Var(&tolerance, "compare-tolerance", bench.DefaultCompareTolerance, "percentage points a mode's ratio to stock River may fall below the saved run's with --compare")
	fs.StringVar(&save, "save", "", "also write the run as JSON to this file (for a later --compare)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if workMs < 0 {
		return fmt.Errorf("--work-ms must not be negative, got %d", workMs)
	}
	opts.Work = time.Duration(workMs) * time.Millisecond
	jobsGiven := false
	fs.Visit(func(f *flag.Flag) { jobsGiven = jobsGiven || f.Name == "jobs" })
	opts.Modes = modes
	opts.Sizes = sizes
	opts.Progress = stderrOf(ctx)
	for _, f := range []struct {
		name  string
		value int
	}{{"jobs", opts.Jobs}, {"workers", opts.Workers}, {"rounds", opts.Rounds}, {"samples", opts.Samples}} {
		if f.value <= 0 {
			return fmt.Errorf("--%s must be positive, got %d", f.name, f.value)
		}
	}
	if !jobsGiven {
		opts.Jobs = 0 // each mode's own default
	}
	if strings.TrimSpace(db.schema) == "" {
		return errors.New("--schema must not be empty: the benchmark needs a schema of its own")
	}
	opts.Schema = db.schema
	if err := opts.Validate(); err != nil {
		return err
	}
	if tolerance < 0 {
		return fmt.Errorf("--compare-tolerance must not be negative, got %g", tolerance)
	}
	// The saved run is read before the benchmark, so that a wrong path
	// fails now rather than after minutes of measuring.
	var saved *bench.Report
	var err error
	if compare != "" {
		if opts.FetchLatency || opts.InsertCost {
			return errors.New("--compare compares throughput runs; it cannot be used with --fetch-latency or --insert-cost")
		}
		if saved, err = bench.ReadReport(compare); err != nil {
			return err
		}
	}

	db.maxConns = benchPoolMaxConns
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	report, err := bench.Run(ctx, pool, opts)
	if err != nil {
		return err
	}
	if saved != nil {
		report.Comparison = bench.Compare(compare, saved, report, tolerance)
	}
	if save != "" {
		if err := writeReportFile(save, report); err != nil {
			return err
		}
	}
	if jsonOut {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteTable(stdout)
		if err == nil && report.Comparison != nil {
			fmt.Fprintln(stdout)
			err = report.Comparison.WriteTable(stdout)
		}
	}
	if err == nil && report.Comparison != nil && report.Comparison.Regressed() {
		err = fmt.Errorf("throughput regressed against %s by more than %.1f points (see the comparison)", compare, tolerance)
	}
	return err
}

// writeReportFile writes report as JSON to path.
func writeReportFile(path string, report *bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	if err := report.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("--save: %w", err)
	}
	return f.Close()
}

// listFlag is a repeatable flag whose values may also be comma separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(value string) error {
	for _, v := range strings.Split(value, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// intListFlag is a comma separated list of positive integers; setting it
// replaces the default. Underscores may group digits (1_000_000).
type intListFlag []int

func (l *intListFlag) String() string {
	parts := make([]string, len(*l))
	for i, n := range *l {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (l *intListFlag) Set(value string) error {
	var list []int
	for _, v := range strings.Split(value, ",") {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(v), "_", ""))
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive integer", v)
		}
		list = append(list, n)
	}
	*l = list
	return nil
}
