package workflow

// This file is the only place where riverbpmn touches River's internal plugin
// seam (River marks it "internal, DO NOT USE"). River is pinned to an exact
// version in go.mod; an upgrade that moves the seam must break the build here,
// which the assertions at the bottom of this file guarantee, and is then a
// one-file change.

import (
	"context"
	"io/fs"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/fetchplan"
)

// Driver is River's pgx v5 driver with riverbpmn plugged in. Build clients
// on it with workflow.NewClient (the engine's Driver) or Driver.NewClient,
// which also give the client the engine's middleware and retry policy. It
// adds:
//
//   - a pilot that fetches jobs with riverbpmn's own fetch query (one fresh
//     pilot per client, so per-client state never leaks between clients);
//   - the "riverbpmn" migration line next to River's "main" line, so rivermigrate
//     and riverdbtest apply both.
//
// Build one with Engine.Driver (stock acquisition) or Engine.NewDriver.
type Driver struct {
	*riverpgxv5.Driver

	engine      *Engine
	dbPool      *pgxpool.Pool
	acquisition Acquisition
	deployments *deploymentSet
	plan        *fetchplan.Plan // the fetch plan of acquisition
	fairTurns   fairTurns       // FairByTenant: whose turn it is, per queue
	order       string          // the acquisition order, for telemetry
}

func newDriver(engine *Engine, dbPool *pgxpool.Pool, acquisition Acquisition) *Driver {
	d := &Driver{
		Driver:      riverpgxv5.New(dbPool),
		engine:      engine,
		dbPool:      dbPool,
		acquisition: acquisition,
		deployments: newDeploymentSet(acquisition.Deployments),
		order:       acquisitionOrder(&acquisition),
	}
	plan, err := fetchplan.New(acquisitionParts(&d.acquisition, d.deployments)...)
	if err != nil { // the parts are riverbpmn's own: a programming error
		panic(err)
	}
	d.plan = plan
	return d
}

// UnwrapExecutor returns an executor for tx, as River's driver does. It works
// on a zero Driver too (as rivertest calls it: `var driver TDriver`), since
// it needs nothing but tx.
func (d *Driver) UnwrapExecutor(tx pgx.Tx) riverdriver.ExecutorTx {
	if d == nil || d.Driver == nil {
		return riverpgxv5.New(nil).UnwrapExecutor(tx)
	}
	return d.Driver.UnwrapExecutor(tx)
}

// PluginInit is called by river.NewClient once per client. riverbpmn needs
// nothing from the archetype: each pilot takes what it needs in PilotInit.
//
// Part of River's internal driver plugin interface.
func (d *Driver) PluginInit(*baseservice.Archetype) {}

// PluginPilot returns a new pilot for the client being built. River calls it
// once per client, so two clients built from one Driver each get their own.
//
// Part of River's internal driver plugin interface.
func (d *Driver) PluginPilot() riverpilot.Pilot { return d.wrapPilot(newPilot(d)) }

// GetMigrationDefaultLines returns River's main line and riverbpmn's line, so
// that tools migrating "the default lines" (riverdbtest) apply both, main
// first.
func (d *Driver) GetMigrationDefaultLines() []string {
	return []string{riverdriver.MigrationLineMain, MigrationLine}
}

// GetMigrationFS returns the migration files of line.
func (d *Driver) GetMigrationFS(line string) fs.FS {
	if line == MigrationLine {
		return migrationFS
	}
	return d.Driver.GetMigrationFS(line)
}

// GetMigrationLines returns every migration line this driver knows.
func (d *Driver) GetMigrationLines() []string {
	return append(slices.Clone(d.Driver.GetMigrationLines()), MigrationLine)
}

// GetMigrationTruncateTables returns the tables that hold data of line at
// version (0 = latest), which test helpers truncate between tests.
func (d *Driver) GetMigrationTruncateTables(line string, version int) []string {
	if line == MigrationLine {
		return migrationTruncateTables(version)
	}
	return d.Driver.GetMigrationTruncateTables(line, version)
}

// PluginServices returns the services River starts with a client that works
// jobs: one that checks the client has the engine's middleware and stores the
// engine's declared job definitions, so that a client refuses to start (with
// an error saying what to do) when it is not wired to the engine or
// riverbpmn's migrations are missing.
//
// Part of River's internal pilot plugin interface.
func (p *pilot) PluginServices() []startstop.Service {
	return []startstop.Service{startstop.StartStopFunc(p.startClient)}
}

// PluginMaintenanceServices returns the services River runs on the elected
// leader only: the one applying scheduled suspensions, the one discarding
// expired jobs (package lifecycle), the pruner of ended timers (unless
// Config.TimerRetention is negative), the telemetry service that reports the
// database figures (telemetry.Instruments.Leader), and the job status event
// pruner (with Config.Events). Each has a type of its own: River keys maintenance
// services by type name, so two of one type would replace each other.
//
// Part of River's internal pilot plugin interface.
func (p *pilot) PluginMaintenanceServices() []startstop.Service {
	services := append(p.suspensionServices(), p.lifecycleServices()...)
	services = append(services, p.driver.engine.timerServices()...)
	services = append(services, p.driver.engine.telemetryServices()...)
	return append(services, p.driver.engine.eventsMaintenanceServices()...)
}

// startClient runs once when the client starts; nothing keeps running.
func (p *pilot) startClient(ctx context.Context, shouldStart bool, started, stopped func()) error {
	if !shouldStart {
		return nil
	}
	defer stopped()
	started()
	if p.driver.engine == nil {
		return nil
	}
	if err := p.checkWiring(ctx); err != nil {
		return err
	}
	p.checkRetryPolicy(ctx)
	if err := p.driver.engine.startEvents(ctx); err != nil {
		return err
	}
	if acq := p.driver.acquisition; acq.FairByTenant {
		if err := p.driver.engine.EnableTenantFairness(ctx, acq); err != nil {
			return err
		}
		if err := p.driver.engine.Exclusive().EnableHeadIndexes(ctx, acq.Order()); err != nil {
			return err
		}
	} else if err := p.driver.engine.EnableFetchOrderIndexes(ctx, acq); err != nil {
		return err
	}
	return p.driver.engine.SyncJobDefinitions(ctx)
}

// Compile-time assertions. River detects driver plugins with a type assertion
// against an unexported interface (river.driverPlugin); the anonymous
// interface below repeats its method set, so a change to it in River shows up
// here as a build error rather than as a silently ignored plugin.
// TestTwoClientsGetTheirOwnPilot checks at run time that River picks it up:
// each client fetches through a riverbpmn pilot of its own.
var (
	_ riverdriver.Driver[pgx.Tx] = (*Driver)(nil)
	_ interface {
		PluginInit(archetype *baseservice.Archetype)
		PluginPilot() riverpilot.Pilot
	} = (*Driver)(nil)
	_ riverpilot.Pilot = (*pilot)(nil)
	_ interface {
		PilotInit(archetype *baseservice.Archetype, params *riverpilot.PilotInitParams)
	} = (*pilot)(nil)
	_ interface { // river.pilotPlugin
		PluginMaintenanceServices() []startstop.Service
		PluginServices() []startstop.Service
	} = (*pilot)(nil)
)

// River's internal plugin types, named here once so that the rest of the
// package uses them without importing the seam's packages.
type (
	riverArchetype              = baseservice.Archetype
	riverBaseService            = baseservice.BaseService
	riverWithBaseService        = baseservice.WithBaseService
	riverPilot                  = riverpilot.Pilot
	riverStandardPilot          = riverpilot.StandardPilot
	riverPilotInitParams        = riverpilot.PilotInitParams
	riverProducerInitParams     = riverpilot.ProducerInitParams
	riverProducerShutdownParams = riverpilot.ProducerShutdownParams
	riverProducerState          = riverpilot.ProducerState
)
