package workflow

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// LineStatus is the state of one migration line in a schema.
type LineStatus struct {
	// Line is the line's name: "main" (River's) or MigrationLine.
	Line string `json:"line"`
	// Applied lists the applied versions, ascending; empty when none is.
	Applied []int `json:"applied"`
	// Missing lists the versions this build knows that are not applied,
	// ascending: what `riverbpmn migrate up` would apply.
	Missing []int `json:"missing"`
	// Latest is the highest version this build knows.
	Latest int `json:"latest"`
}

// Current returns the highest applied version, 0 when none is.
func (s *LineStatus) Current() int {
	if len(s.Applied) == 0 {
		return 0
	}
	return s.Applied[len(s.Applied)-1]
}

// MigrationStatus is the state of River's main line and riverbpmn's line in
// a schema, as MigrationStatusOf reports it.
type MigrationStatus struct {
	Schema string      `json:"schema"`
	Main   *LineStatus `json:"main"`
	BPMN   *LineStatus `json:"riverbpmn"`
	// Warnings say what is wrong for riverbpmn to run, with what to do;
	// empty when both lines are fully applied.
	Warnings []string `json:"warnings"`
}

// MigrationStatusOf reports which migrations of River's main line and of
// riverbpmn's line are applied in schema and which are missing. Unlike
// MigrationVersions it does not fail on a schema where nothing is applied
// (everything is then missing), and it warns when River's main line is below
// the version this build of riverbpmn (and the River it is built with)
// needs, for instance after River's main line was rolled back.
func MigrationStatusOf(ctx context.Context, dbPool *pgxpool.Pool, schema string) (*MigrationStatus, error) {
	driver := newDriver(nil, dbPool, Acquisition{})
	exec := driver.GetExecutor()
	status := &MigrationStatus{Schema: schema}

	tableExists, err := exec.TableExists(ctx, &riverdriver.TableExistsParams{Schema: schema, Table: "river_migration"})
	if err != nil {
		return nil, fmt.Errorf("workflow: checking River's migrations in schema %s: %w", schemaName(schema), err)
	}
	hasLines := false
	if tableExists {
		if hasLines, err = exec.ColumnExists(ctx, &riverdriver.ColumnExistsParams{Column: "line", Schema: schema, Table: "river_migration"}); err != nil {
			return nil, fmt.Errorf("workflow: checking River's migrations in schema %s: %w", schemaName(schema), err)
		}
	}

	for _, line := range []string{riverdriver.MigrationLineMain, MigrationLine} {
		migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Line: line, Logger: discardLogger(), Schema: schema})
		if err != nil {
			return nil, err
		}
		ls := &LineStatus{Line: line, Applied: []int{}, Missing: []int{}}
		var applied []int
		switch {
		case hasLines:
			existing, err := migrator.ExistingVersions(ctx)
			if err != nil {
				return nil, fmt.Errorf("workflow: reading %q migration versions in schema %s: %w", line, schemaName(schema), err)
			}
			for _, m := range existing {
				applied = append(applied, m.Version)
			}
		case tableExists && line == riverdriver.MigrationLineMain:
			// River's migration table from before lines (main below 5).
			rows, err := dbPool.Query(ctx, "SELECT version FROM "+qualifiedTable(schema, "river_migration")+" ORDER BY version")
			if err != nil {
				return nil, fmt.Errorf("workflow: reading River's migration versions in schema %s: %w", schemaName(schema), err)
			}
			if applied, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
				return nil, fmt.Errorf("workflow: reading River's migration versions in schema %s: %w", schemaName(schema), err)
			}
		}
		ls.Applied = append(ls.Applied, applied...)
		for _, m := range migrator.AllVersions() {
			ls.Latest = max(ls.Latest, m.Version)
			if !slices.Contains(applied, m.Version) {
				ls.Missing = append(ls.Missing, m.Version)
			}
		}
		if line == MigrationLine {
			status.BPMN = ls
		} else {
			status.Main = ls
		}
	}

	switch {
	case status.Main.Current() == 0:
		status.Warnings = append(status.Warnings, fmt.Sprintf("River's main line is not applied in schema %s; run `riverbpmn migrate up`", schemaName(schema)))
	case status.Main.Current() < status.Main.Latest:
		status.Warnings = append(status.Warnings, fmt.Sprintf("River's main line is at version %d, below version %d that riverbpmn (built with this River) needs; run `riverbpmn migrate up`", status.Main.Current(), status.Main.Latest))
	}
	switch {
	case status.BPMN.Current() == 0:
		status.Warnings = append(status.Warnings, fmt.Sprintf("riverbpmn's line is not applied in schema %s; run `riverbpmn migrate up`", schemaName(schema)))
	case len(status.BPMN.Missing) > 0:
		status.Warnings = append(status.Warnings, fmt.Sprintf("riverbpmn's line is at version %d, missing %v; run `riverbpmn migrate up`", status.BPMN.Current(), status.BPMN.Missing))
	}
	return status, nil
}

// qualifiedTable names table in schema (the search_path when empty).
func qualifiedTable(schema, table string) string {
	if schema == "" {
		return pgx.Identifier{table}.Sanitize()
	}
	return pgx.Identifier{schema, table}.Sanitize()
}
