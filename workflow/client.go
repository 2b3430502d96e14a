package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// ErrClientNotWired is wrapped by the error of a client on an engine's driver
// that lacks a piece of the engine: its middleware, or its schema (the client
// refuses to start, and refuses every insert).
// The message says what to add. NewClient wires a client completely.
var ErrClientNotWired = errors.New("client is not wired to the riverbpmn engine")

// ClientConfig returns a copy of config completed with everything a River
// client needs to run riverbpmn's jobs, so that nothing can be half done:
//
//   - Middleware: the engine's Middleware, first (added unless present);
//   - RetryPolicy: the engine's RetryPolicy; a policy already set (other than
//     a *RetryPolicy) is kept as its Fallback, for plain River jobs;
//   - Hooks: the engine's telemetry hook, last (added unless present), which
//     gives the span of each job's work the job's BPMN identity;
//   - Schema: the engine's Config.Schema. Give the schema once, in
//     workflow.Config; a different non-empty river.Config.Schema is an error.
//
// Everything else is config's: without a Logger the client gets River's
// default logger (warnings and errors), and the engine logs there too.
// config is not modified.
//
// To build a client, call NewClient (or Driver.NewClient for a driver of
// Engine.NewDriver), which calls ClientConfig: this method is for River APIs
// that take a config rather than build a client, such as rivertest.NewWorker.
func (e *Engine) ClientConfig(config *river.Config) (*river.Config, error) {
	if config == nil {
		config = &river.Config{}
	}
	wired := *config
	switch {
	case wired.Schema == "":
		wired.Schema = e.config.Schema
	case wired.Schema != e.config.Schema:
		return nil, fmt.Errorf("workflow: river.Config.Schema %q differs from workflow.Config.Schema %q: the management API would read another schema than the client works; set the schema once, in workflow.Config.Schema", wired.Schema, e.config.Schema)
	}
	e.addMiddleware(&wired)
	if !slices.Contains(wired.Hooks, e.telHook) {
		wired.Hooks = append(slices.Clone(wired.Hooks), e.telHook)
	}
	switch policy := wired.RetryPolicy.(type) {
	case nil:
		wired.RetryPolicy = e.RetryPolicy()
	case *RetryPolicy:
	default:
		wired.RetryPolicy = &RetryPolicy{Fallback: policy}
	}
	return &wired, nil
}

// addMiddleware puts the engine's middleware first in config's middleware,
// unless it is there: in Middleware, or, for a config that uses River's
// older JobInsertMiddleware and WorkerMiddleware fields (River refuses a
// config that mixes both forms), first in both of those.
func (e *Engine) addMiddleware(config *river.Config) {
	e.middlewareUsed.Store(true)
	mine := func(m any) bool { return m == any(e.middleware) }
	if len(config.Middleware) == 0 && (len(config.JobInsertMiddleware) > 0 || len(config.WorkerMiddleware) > 0) {
		if !slices.ContainsFunc(config.JobInsertMiddleware, func(m rivertype.JobInsertMiddleware) bool { return mine(m) }) {
			config.JobInsertMiddleware = append([]rivertype.JobInsertMiddleware{e.middleware}, config.JobInsertMiddleware...)
		}
		if !slices.ContainsFunc(config.WorkerMiddleware, func(m rivertype.WorkerMiddleware) bool { return mine(m) }) {
			config.WorkerMiddleware = append([]rivertype.WorkerMiddleware{e.middleware}, config.WorkerMiddleware...)
		}
		return
	}
	if !slices.ContainsFunc(config.Middleware, func(m rivertype.Middleware) bool { return mine(m) }) {
		config.Middleware = append([]rivertype.Middleware{e.middleware}, config.Middleware...)
	}
}

// NewClient builds a River client wired to the engine: the way to build a
// client that works or inserts riverbpmn jobs. It is river.NewClient on the
// engine's Driver with engine.ClientConfig(config): the engine's middleware,
// its retry policy (config's own, if any, kept as its Fallback), its schema.
//
//	client, err := workflow.NewClient(engine, &river.Config{
//		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
//		Workers: workers,
//	})
//
// A client with an acquisition order of its own is built the same way on a
// driver of Engine.NewDriver: driver.NewClient(config).
//
// A client built by hand, river.NewClient(engine.Driver(), config), is
// checked: without the engine's middleware (or with another schema) it
// refuses to start and to insert (ErrClientNotWired); with another retry
// policy it logs an error when it starts, since its riverbpmn jobs would be
// retried on River's backoff instead of their retry cycles.
func NewClient(engine *Engine, config *river.Config) (*river.Client[pgx.Tx], error) {
	return engine.Driver().NewClient(config)
}

// NewClient builds a River client on this driver, wired to its engine as
// workflow.NewClient does on the engine's default driver: use it for a
// driver of Engine.NewDriver.
func (d *Driver) NewClient(config *river.Config) (*river.Client[pgx.Tx], error) {
	if d.engine == nil {
		return nil, errors.New("workflow: Driver.NewClient: the driver has no engine; get it from Engine.Driver or Engine.NewDriver")
	}
	wired, err := d.engine.ClientConfig(config)
	if err != nil {
		return nil, err
	}
	return river.NewClient(d, wired)
}

// wiringKey marks the context of an insert that went through an engine's
// middleware; its value is the engine.
type wiringKey struct{}

// wiringProbeKey marks the context of the probe insert a client makes when it
// starts (see pilot.checkWiring); its value is the engine.
type wiringProbeKey struct{}

// errWiringProbeOK is how the engine's middleware answers the probe.
var errWiringProbeOK = errors.New("workflow: wiring probe answered by the engine's middleware")

// wiringProbeArgs are the args of the probe insert. The probe never reaches
// the database: the engine's middleware answers it, or the pilot refuses it.
type wiringProbeArgs struct{}

func (wiringProbeArgs) Kind() string { return "riverbpmn_wiring_probe" }

// notWired says what a client on the engine's driver lacks.
func notWired(what string) error {
	return fmt.Errorf("workflow: %w: %s; build the client with workflow.NewClient(engine, config) (driver.NewClient(config) for a driver of Engine.NewDriver)", ErrClientNotWired, what)
}

// checkInsertWiring refuses an insert by a client on the engine's driver that
// skipped the engine's middleware (the job would be stored without its job
// context) or uses another schema than the engine's.
func (e *Engine) checkInsertWiring(ctx context.Context, schema string) error {
	if ctx.Value(wiringProbeKey{}) != nil || ctx.Value(wiringKey{}) != e {
		return notWired("river.Config.Middleware lacks engine.Middleware(), so jobs would be inserted without their job context")
	}
	return e.checkSchema(schema)
}

// checkSchema refuses a client whose schema is not the engine's.
func (e *Engine) checkSchema(schema string) error {
	if schema != e.config.Schema {
		return notWired(fmt.Sprintf("river.Config.Schema is %q but workflow.Config.Schema is %q", schema, e.config.Schema))
	}
	return nil
}

// checkSchemaWiring runs when each of a starting client's producers starts
// (ProducerInit): a client working another schema than the engine's refuses
// to start.
func (p *pilot) checkSchemaWiring(schema string) error {
	if p.driver.engine == nil {
		return nil
	}
	return p.driver.engine.checkSchema(schema)
}

// JobInsertMany inserts jobs as River's standard pilot does, after checking
// that the inserting client is wired to the engine (checkInsertWiring): one
// context lookup and one string comparison per batch. Inserted by a running
// job, the jobs' queues are notified in the insert's transaction
// (followup.go).
func (p *pilot) JobInsertMany(ctx context.Context, execTx riverdriver.ExecutorTx, params *riverdriver.JobInsertFastManyParams) ([]*riverdriver.JobInsertFastResult, error) {
	if engine := p.driver.engine; engine != nil {
		if err := engine.checkInsertWiring(ctx, params.Schema); err != nil {
			return nil, err
		}
	}
	results, err := p.riverStandardPilot.JobInsertMany(ctx, execTx, params)
	if err != nil {
		return nil, err
	}
	if err := notifyFollowUps(ctx, execTx, params); err != nil {
		return nil, err
	}
	return results, nil
}

// checkWiring runs when a client starts, unless the engine's middleware was
// seen among the client's (middleware_wiring.go): it sends a probe insert
// through the client's insert path. The engine's middleware answers it
// without going further; without the middleware the probe reaches the
// pilot, which refuses it, and the client refuses to start. Nothing is
// written.
func (p *pilot) checkWiring(ctx context.Context) error {
	if p.middlewareSeen || p.insert == nil || p.driver.engine == nil {
		return nil
	}
	probeCtx := context.WithValue(ctx, wiringProbeKey{}, p.driver.engine)
	_, err := p.insert(probeCtx, nil, []*rivertype.JobInsertParams{{
		Args:        wiringProbeArgs{},
		EncodedArgs: []byte("{}"),
		Kind:        wiringProbeArgs{}.Kind(),
		MaxAttempts: 1,
		Metadata:    []byte("{}"),
		Queue:       river.QueueDefault,
		State:       rivertype.JobStateAvailable,
	}})
	if errors.Is(err, ErrClientNotWired) {
		return err
	}
	// errWiringProbeOK, or another middleware's answer to a job it does not
	// know: the engine's middleware may still be there, so let the client run.
	return nil
}
