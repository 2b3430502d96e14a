package main

import (
	"context"
	"fmt"
	"io"

	"github.com/riverqueue/river/rivermigrate"

	"github.com/riverbpmn/riverbpmn/internal/buildinfo"
	"github.com/riverbpmn/riverbpmn/workflow"
)

func runMigrateUp(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db   dbFlags
		opts workflow.MigrateOpts
		fs   = newFlagSet("migrate-up")
	)
	db.register(fs)
	fs.BoolVar(&opts.SkipMainLine, "skip-main", false, "do not apply River's main line (it must already be applied)")
	fs.IntVar(&opts.MaxSteps, "max-steps", 0, "apply at most this many riverbpmn migrations (0 = all)")
	fs.IntVar(&opts.TargetVersion, "target-version", 0, "migrate riverbpmn's line up to this version (0 = latest)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	opts.Schema = db.schema
	res, err := workflow.MigrateUp(ctx, pool, &opts)
	if err != nil {
		return err
	}
	if res.Main != nil {
		printMigrated(stdout, "main", res.Main)
	}
	printMigrated(stdout, workflow.MigrationLine, res.BPMN)
	return nil
}

func runMigrateDown(ctx context.Context, args []string, stdout io.Writer) error {
	var (
		db   dbFlags
		opts workflow.MigrateOpts
		fs   = newFlagSet("migrate-down")
	)
	db.register(fs)
	fs.IntVar(&opts.MaxSteps, "max-steps", 0, "roll back at most this many riverbpmn migrations (0 = one)")
	fs.IntVar(&opts.TargetVersion, "target-version", 0, "roll riverbpmn's line back to this version (-1 = remove it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	opts.Schema = db.schema
	res, err := workflow.MigrateDown(ctx, pool, &opts)
	if err != nil {
		return err
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
		db dbFlags
		fs = newFlagSet("version")
	)
	db.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	versions := buildinfo.Read()
	fmt.Fprintf(stdout, "riverbpmn %s\nriver %s\n%s\n", versions.RiverBPMN, versions.River, versions.Go)
	if db.databaseURL == "" {
		return nil
	}
	pool, err := db.connect(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	mainVersions, ourVersions, err := workflow.MigrationVersions(ctx, pool, db.schema)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "schema main line: %s\nschema %s line: %s\n",
		lastVersion(mainVersions), workflow.MigrationLine, lastVersion(ourVersions))
	return nil
}

func lastVersion(versions []int) string {
	if len(versions) == 0 {
		return "not applied"
	}
	return fmt.Sprintf("version %03d", versions[len(versions)-1])
}
