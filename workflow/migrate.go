package workflow

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// MigrationLine is the name of riverbpmn's migration line, applied with
// rivermigrate next to River's "main" line. Its tables are named river_bpmn_*.
// The name sorts after "main" on purpose: riverdbtest applies a driver's
// lines in alphabetical order, and ours needs main's river_migration table.
const MigrationLine = "riverbpmn"

//go:embed migration/riverbpmn/*.sql
var migrationFS embed.FS

// eventsMigrationVersion is the version of the migration that adds the job
// status event outbox (009_events), and eventsMigrationTables its tables.
const eventsMigrationVersion = 9

var eventsMigrationTables = []string{"river_bpmn_event", "river_bpmn_event_subscription"}

// migrationTruncateTables returns the tables of our line that hold data at
// version (0 = latest). Version 1 only adds an index.
func migrationTruncateTables(version int) []string { //nolint:unparam // grows with the line
	var tables []string
	if version == 0 || version >= 2 {
		tables = append(tables, "river_bpmn_job_definition")
	}
	if version == 0 || version >= 4 {
		tables = append(tables, "river_bpmn_incident")
	}
	if version == 0 || version >= 5 {
		tables = append(tables, "river_bpmn_exclusive_lock")
	}
	if version == 0 || version >= migrationVersionTimers {
		tables = append(tables, "river_bpmn_timer")
	}
	if version == 0 || version >= migrationVersionHoldSuspension {
		tables = append(tables, "river_bpmn_hold", "river_bpmn_suspension", "river_bpmn_suspension_schedule")
	}
	if version == 0 || version >= livenessMigrationVersion {
		tables = append(tables, "river_bpmn_client_session")
	}
	if version == 0 || version >= eventsMigrationVersion {
		tables = append(tables, eventsMigrationTables...)
	}
	if version == 0 || version >= migrationVersionLifecycle {
		tables = append(tables, "river_bpmn_dependency", "river_bpmn_dependent", "river_bpmn_expiry")
	}
	if version == 0 || version >= migrationVersionEventsPruned {
		tables = append(tables, "river_bpmn_event_pruned")
	}
	if version == 0 || version >= migrationVersionSettings {
		tables = append(tables, "river_bpmn_setting")
	}
	if version == 0 || version >= migrationVersionDeployments {
		tables = append(tables, "river_bpmn_deployment", "river_bpmn_deployment_resource", "river_bpmn_process_definition", "river_bpmn_process_key")
	}
	if version == 0 || version >= migrationVersionBulkOperation {
		tables = append(tables, "river_bpmn_bulk_operation")
	}
	return tables
}

// migrationVersionEventsPruned is the version of migration
// 019_events_pruned_mark, which adds river_bpmn_event_pruned: a mark left by
// one test would tell the next user of the schema that events were pruned.
const migrationVersionEventsPruned = 19

// migrationVersionTimers is the version of migration 006_timers, which adds
// river_bpmn_timer.
const migrationVersionTimers = 6

// migrationVersionHoldSuspension is the version of migration
// 007_hold_suspension (held jobs and suspension). Its epoch table holds one
// row that must survive truncation, so it is not listed.
const migrationVersionHoldSuspension = 7

// livenessMigrationVersion is the version of our line that adds
// river_bpmn_client_session (migration 008_liveness).
const livenessMigrationVersion = 8

// migrationVersionSettings is the version of migration 021_settings, which
// adds river_bpmn_setting (the exclusive scope in force).
const migrationVersionSettings = 21

// migrationVersionDeployments is the version of migration 024_deployments
// (deployed BPMN models; package deployment).
const migrationVersionDeployments = 24

// migrationVersionBulkOperation is the version of migration
// 025_bulk_operation, which adds river_bpmn_bulk_operation.
const migrationVersionBulkOperation = 25

// migrationVersionLifecycle is the version of migration 011_lifecycle
// (pending jobs, dependencies, expiration; package lifecycle).
const migrationVersionLifecycle = 11

// ErrMainLineMissing is returned when riverbpmn's line is to be applied to a
// schema where River's main line is not (fully) applied.
var ErrMainLineMissing = errors.New("River's main migration line is not applied")

// MigrateOpts configures MigrateUp and MigrateDown.
type MigrateOpts struct {
	// Schema to migrate; empty means the connection's search_path.
	Schema string

	// SkipMainLine leaves River's main line alone in MigrateUp, for
	// applications that apply it themselves (River's CLI, their own
	// rivermigrate call). It must then already be applied.
	SkipMainLine bool

	// MaxSteps and TargetVersion apply to riverbpmn's line, with
	// rivermigrate's meaning: MigrateUp goes all the way up by default,
	// MigrateDown one step; TargetVersion -1 with MigrateDown removes the line.
	MaxSteps      int
	TargetVersion int

	// Logger receives rivermigrate's progress lines; nil means discard.
	Logger *slog.Logger
}

// MigrateResult says which versions were applied or removed, per line.
type MigrateResult struct {
	// Main is River's main line; nil when it was skipped.
	Main *rivermigrate.MigrateResult
	// BPMN is riverbpmn's line.
	BPMN *rivermigrate.MigrateResult
}

var (
	// migrateLockSQL takes the schema's migration lock (see lockMigrations).
	migrateLockSQL = mustReadSQL("migrate_lock.sql")
	// currentSchemaSQL names the search_path's schema.
	currentSchemaSQL = mustReadSQL("current_schema.sql")
)

// lockMigrations takes the migration lock of schema (empty: the pool's
// search_path) and returns the function that releases it. The lock is a
// PostgreSQL transaction advisory lock, held by a transaction left open on
// a connection of its own, opened with the pool's connection settings but
// outside the pool, so that the migrations, which run on the pool, can never
// wait for a connection the lock holds (a pool of one connection works).
// River applies each migration in its own transaction, as it does without
// the lock: some must commit before the next may use what they add (an
// enum value).
//
// A transaction lock rather than a session lock: behind a transaction-mode
// pooler (PgBouncer), a session lock would stay with the pooled server
// connection after this one closed, and every later migration would wait
// for it forever; an open transaction keeps its server connection, and the
// pooler ends it (and the lock) when this connection closes. The idle
// transaction takes no transaction id and keeps no snapshot between
// statements, so it holds back no vacuum.
//
// Without the lock, processes migrating one fresh schema at once collide:
// two of them creating River's tables and types together fail with
// duplicate pg_type rows or "relation river_migration already exists".
func lockMigrations(ctx context.Context, dbPool *pgxpool.Pool, schema string) (unlock func(), err error) {
	if schema == "" {
		if err := dbPool.QueryRow(ctx, currentSchemaSQL).Scan(&schema); err != nil {
			return nil, fmt.Errorf("workflow: naming the search_path's schema for the migration lock: %w", err)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, dbPool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("workflow: connecting for the migration lock: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, migrateLockSQL, schema)
	}
	if err != nil {
		_ = conn.Close(context.Background())
		return nil, fmt.Errorf("workflow: taking the migration lock of schema %s: %w", schemaName(schema), err)
	}
	// Ending the transaction releases the lock; closing the connection
	// ends it whatever state ctx is in.
	return func() {
		_ = tx.Rollback(context.Background())
		_ = conn.Close(context.Background())
	}, nil
}

// MigrateUp migrates River's main line all the way up, then riverbpmn's line.
// It is idempotent: a migrated schema is left as it is.
//
// It is safe to call from several processes at once, as every replica that
// migrates when it boots does: it first takes a PostgreSQL advisory lock
// keyed by the schema and holds it until both lines are migrated, so the
// first process applies the migrations and the others, once it is done, find
// nothing left to do. The lock is riverbpmn's: River's own `river migrate-up`,
// run at the same time on the same schema, does not take it.
func MigrateUp(ctx context.Context, dbPool *pgxpool.Pool, opts *MigrateOpts) (*MigrateResult, error) {
	opts = migrateOptsOrDefault(opts)
	unlock, err := lockMigrations(ctx, dbPool, opts.Schema)
	if err != nil {
		return nil, err
	}
	defer unlock()
	driver := newDriver(nil, dbPool, Acquisition{})
	res := &MigrateResult{}

	if !opts.SkipMainLine {
		mainRes, err := migrate(ctx, driver, riverdriver.MigrationLineMain, rivermigrate.DirectionUp, opts, &rivermigrate.MigrateOpts{})
		if err != nil {
			return nil, err
		}
		res.Main = mainRes
	}

	if err := requireMainLine(ctx, driver, opts.Schema); err != nil {
		return nil, err
	}
	bpmnRes, err := migrate(ctx, driver, MigrationLine, rivermigrate.DirectionUp, opts, &rivermigrate.MigrateOpts{
		MaxSteps: opts.MaxSteps, TargetVersion: opts.TargetVersion,
	})
	if err != nil {
		return nil, err
	}
	res.BPMN = bpmnRes
	return res, nil
}

// MigrateDown migrates riverbpmn's line down (one step by default). River's
// main line is never touched: River may well be used without riverbpmn. It
// takes MigrateUp's lock.
func MigrateDown(ctx context.Context, dbPool *pgxpool.Pool, opts *MigrateOpts) (*MigrateResult, error) {
	opts = migrateOptsOrDefault(opts)
	unlock, err := lockMigrations(ctx, dbPool, opts.Schema)
	if err != nil {
		return nil, err
	}
	defer unlock()
	driver := newDriver(nil, dbPool, Acquisition{})
	if err := requireMainLine(ctx, driver, opts.Schema); err != nil {
		return nil, err
	}
	bpmnRes, err := migrate(ctx, driver, MigrationLine, rivermigrate.DirectionDown, opts, &rivermigrate.MigrateOpts{
		MaxSteps: opts.MaxSteps, TargetVersion: opts.TargetVersion,
	})
	if err != nil {
		return nil, err
	}
	return &MigrateResult{BPMN: bpmnRes}, nil
}

// MigrationVersions returns the applied versions of River's main line and of
// riverbpmn's line (each nil when none is applied).
func MigrationVersions(ctx context.Context, dbPool *pgxpool.Pool, schema string) (mainVersions, bpmnVersions []int, err error) {
	driver := newDriver(nil, dbPool, Acquisition{})
	if err := requireMainLine(ctx, driver, schema); err != nil {
		return nil, nil, err
	}
	for _, line := range []string{riverdriver.MigrationLineMain, MigrationLine} {
		migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Line: line, Logger: discardLogger(), Schema: schema})
		if err != nil {
			return nil, nil, err
		}
		existing, err := migrator.ExistingVersions(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("workflow: reading %q migration versions: %w", line, err)
		}
		versions := make([]int, len(existing))
		for i, m := range existing {
			versions[i] = m.Version
		}
		if line == MigrationLine {
			bpmnVersions = versions
		} else {
			mainVersions = versions
		}
	}
	return mainVersions, bpmnVersions, nil
}

func migrate(ctx context.Context, driver *Driver, line string, direction rivermigrate.Direction, opts *MigrateOpts, migrateOpts *rivermigrate.MigrateOpts) (*rivermigrate.MigrateResult, error) {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Line: line, Logger: opts.Logger, Schema: opts.Schema})
	if err != nil {
		return nil, err
	}
	res, err := migrator.Migrate(ctx, direction, migrateOpts)
	if err != nil {
		return nil, fmt.Errorf("workflow: migrating line %q %s in schema %s: %w", line, direction, schemaName(opts.Schema), err)
	}
	return res, nil
}

// requireMainLine returns ErrMainLineMissing, with the schema and what to do,
// unless River's migration table (with its per-line column, main line
// version 5) exists in schema.
func requireMainLine(ctx context.Context, driver *Driver, schema string) error {
	exists, err := driver.GetExecutor().ColumnExists(ctx, &riverdriver.ColumnExistsParams{
		Column: "line", Schema: schema, Table: "river_migration",
	})
	if err != nil {
		return fmt.Errorf("workflow: checking River's migrations in schema %s: %w", schemaName(schema), err)
	}
	if !exists {
		return fmt.Errorf("workflow: schema %s: %w; apply it first (riverbpmn migrate up applies it, or `river migrate-up`)", schemaName(schema), ErrMainLineMissing)
	}
	return nil
}

func migrateOptsOrDefault(opts *MigrateOpts) *MigrateOpts {
	if opts == nil {
		opts = &MigrateOpts{}
	}
	if opts.Logger == nil {
		copied := *opts
		copied.Logger = discardLogger()
		opts = &copied
	}
	return opts
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func schemaName(schema string) string {
	if schema == "" {
		return "(search_path)"
	}
	return fmt.Sprintf("%q", schema)
}
