package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/riverbpmn/riverbpmn/internal/buildinfo"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func runMigrateUp(ctx context.Context, args []string, stdout io.Writer) error {
	return runMigrate(ctx, "migrate up", args, stdout,
		func(fs *flag.FlagSet, opts *workflow.MigrateOpts) {
			fs.BoolVar(&opts.SkipMainLine, "skip-main", false, "do not apply River's main line (it must already be applied)")
			fs.IntVar(&opts.MaxSteps, "max-steps", 0, "apply at most this many riverbpmn migrations (0 = all)")
			fs.IntVar(&opts.TargetVersion, "target-version", 0, "migrate riverbpmn's line up to this version (0 = latest)")
		},
		workflow.MigrateUp)
}

func runMigrateDown(ctx context.Context, args []string, stdout io.Writer) error {
	return runMigrate(ctx, "migrate down", args, stdout,
		func(fs *flag.FlagSet, opts *workflow.MigrateOpts) {
			fs.IntVar(&opts.MaxSteps, "max-steps", 0, "roll back at most this many riverbpmn migrations (0 = one)")
			fs.IntVar(&opts.TargetVersion, "target-version", 0, "roll riverbpmn's line back to this version (-1 = remove it)")
		},
		workflow.MigrateDown)
}

// runMigrate parses a migrate command's flags (the connection flags plus
// those registerFlags adds), connects, runs migrate and prints what it did,
// River's main line first.
func runMigrate(
	ctx context.Context, name string, args []string, stdout io.Writer,
	registerFlags func(fs *flag.FlagSet, opts *workflow.MigrateOpts),
	migrate func(context.Context, *pgxpool.Pool, *workflow.MigrateOpts) (*workflow.MigrateResult, error),
) error {
	var (
		db   dbFlags
		opts workflow.MigrateOpts
		fs   = newFlagSet(name)
	)
	db.register(fs)
	registerFlags(fs, &opts)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	opts.Schema = db.schema
	res, err := migrate(ctx, pool, &opts)
	if err != nil {
		return err
	}
	if res.Main != nil {
		printMigrated(stdout, "main", res.Main)
	}
	printMigrated(stdout, workflow.MigrationLine, res.BPMN)
	return nil
}

func printMigrated(w io.Writer, line string, res *rivermigrate.MigrateResult) {
	if len(res.Versions) == 0 {
		fmt.Fprintf(w, "%s: no migrations to apply (%s)\n", line, res.Direction)
		return
	}
	for _, v := range res.Versions {
		fmt.Fprintf(w, "%s: applied %s %03d %s [%s]\n", line, res.Direction, v.Version, v.Name, v.Duration)
	}
}

func runVersion(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db  dbFlags
		out outputFlag
		fs  = newFlagSet("version")
	)
	db.register(fs)
	out.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	type report struct {
		RiverBPMN string                    `json:"riverbpmn"`
		River     string                    `json:"river"`
		Go        string                    `json:"go"`
		Schema    *workflow.MigrationStatus `json:"schema,omitempty"`
	}
	versions := buildinfo.Read()
	rep := report{RiverBPMN: versions.RiverBPMN, River: versions.River, Go: versions.Go}
	if db.url() != "" {
		pool, err := db.connect(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()
		if rep.Schema, err = workflow.MigrationStatusOf(ctx, pool, db.schema); err != nil {
			return err
		}
	}
	return out.print(stdout, rep, func(w io.Writer) error {
		fmt.Fprintf(w, "riverbpmn %s\nriver %s\n%s\n", rep.RiverBPMN, rep.River, rep.Go)
		if rep.Schema == nil {
			return nil
		}
		for _, line := range []*workflow.LineStatus{rep.Schema.Main, rep.Schema.BPMN} {
			fmt.Fprintf(w, "schema %s line: %s\n", line.Line, lastVersion(line.Applied))
			fmt.Fprintf(w, "  applied: %s; missing: %s (latest known: %03d)\n", versionList(line.Applied), versionList(line.Missing), line.Latest)
		}
		for _, warning := range rep.Schema.Warnings {
			fmt.Fprintf(w, "warning: %s\n", warning)
		}
		return nil
	})
}

// lastVersion describes the highest of the applied versions.
func lastVersion(versions []int) string {
	if len(versions) == 0 {
		return "not applied"
	}
	return fmt.Sprintf("version %03d", versions[len(versions)-1])
}

// versionList prints versions like "001-004, 006", or "none".
func versionList(versions []int) string {
	if len(versions) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(versions); {
		j := i
		for j+1 < len(versions) && versions[j+1] == versions[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprintf("%03d", versions[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%03d-%03d", versions[i], versions[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
