package workflow

import (
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"
)

// Config configures an Engine.
type Config struct {
	// Schema is the schema of River's and riverbpmn's tables, as in
	// river.Config.Schema. Empty means the connection's search_path. It is used
	// by the management API; clients take theirs from river.Config.Schema.
	Schema string

	// ProcessDefinitions and JobDefinitions declare the processes and job
	// definitions whose jobs the engine inserts. They are validated by
	// NewEngine; job definitions are stored (with their run-time state, such
	// as an overriding priority) when a client starts.
	ProcessDefinitions []ProcessDefinition
	JobDefinitions     []JobDefinition

	// DisablePrioritizedJobs switches prioritised job creation off: every job
	// gets priority 0 and overriding priorities are not applied at insert
	// (Camunda's producePrioritizedJobs=false).
	DisablePrioritizedJobs bool
}

// Engine is riverbpmn's entry point: it holds the configuration and builds
// what a River client needs to run with BPMN job-executor semantics.
//
//	engine, err := workflow.NewEngine(dbPool, &workflow.Config{})
//	client, err := river.NewClient(engine.Driver(), &river.Config{
//		Middleware: []rivertype.Middleware{engine.Middleware()},
//		...
//	})
type Engine struct {
	config     Config
	defs       *definitions
	dbPool     *pgxpool.Pool
	driver     *Driver
	middleware *middleware
}

// NewEngine builds an engine on dbPool. dbPool may be nil, as with
// riverpgxv5.New: clients can then only insert within transactions and the
// management API is unavailable.
func NewEngine(dbPool *pgxpool.Pool, config *Config) (*Engine, error) {
	if config == nil {
		config = &Config{}
	}
	defs, err := newDefinitions(config.ProcessDefinitions, config.JobDefinitions)
	if err != nil {
		return nil, err
	}
	e := &Engine{config: *config, defs: defs, dbPool: dbPool}
	e.driver = newDriver(e, dbPool, Acquisition{})
	e.middleware = &middleware{engine: e}
	return e, nil
}

// Driver returns the engine's River driver with stock acquisition, to pass to
// river.NewClient. Any number of clients may share it; each gets its own
// pilot.
func (e *Engine) Driver() *Driver { return e.driver }

// NewDriver returns a River driver whose clients acquire jobs as acq says.
// Give each client that needs its own acquisition, or its own set of
// registered deployments, a driver of its own: the deployments registered on
// a driver are those of the clients built from it.
func (e *Engine) NewDriver(acq Acquisition) (*Driver, error) {
	if err := acq.Validate(); err != nil {
		return nil, err
	}
	acq.Deployments = slices.Clone(acq.Deployments)
	if acq.PriorityRange != nil {
		r := *acq.PriorityRange
		acq.PriorityRange = &r
	}
	return newDriver(e, e.dbPool, acq), nil
}

// Middleware returns the middleware that gives inserted jobs their job
// context. Add it to river.Config.Middleware of every client that inserts
// BPMN jobs; River runs it for all six insert calls.
func (e *Engine) Middleware() rivertype.Middleware { return e.middleware }
