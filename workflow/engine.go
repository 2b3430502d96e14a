package workflow

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/definition"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/overview"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/queue"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
	"github.com/riverbpmn/riverbpmn/session"
	"github.com/riverbpmn/riverbpmn/suspension"
	"github.com/riverbpmn/riverbpmn/telemetry"
	"github.com/riverbpmn/riverbpmn/timer"
)

// Config configures an Engine.
type Config struct {
	// Schema is the schema of River's and riverbpmn's tables. Empty means the
	// connection's search_path. It is used by the management API and by every
	// client on the engine's drivers: NewClient and ClientConfig copy it into
	// river.Config.Schema, and a client whose river.Config.Schema differs
	// refuses to insert (ErrClientNotWired).
	Schema string

	// ProcessDefinitions and JobDefinitions declare the processes and job
	// definitions whose jobs the engine inserts. They are validated by
	// NewEngine; job definitions are stored (with their run-time state, such
	// as an overriding priority) when a client starts. An engine that
	// declares process definitions refuses to insert a job whose job
	// context names a process definition it does not declare; one that
	// declares none takes any key.
	ProcessDefinitions []ProcessDefinition
	JobDefinitions     []JobDefinition

	// Expressions are the Go functions that expressions in deployed BPMN
	// models bind to: camunda:jobPriority="${customerPriority}" binds to
	// Expressions.Priorities["customerPriority"], a failedJobRetryTimeCycle
	// of "${cycle}" to Expressions.RetryCycles["cycle"]. Deploying a model
	// whose expression has no function here fails, naming the resource,
	// the element and the expression; so does inserting a job of such a
	// definition through an engine that lacks it. See Engine.Deployments.
	Expressions bpmn.Expressions

	// Priority is how jobs get their priorities (package priority):
	// Priority.Disabled switches prioritised job creation off, every job
	// then getting priority 0 with no overriding priority applied at insert
	// (Camunda's producePrioritizedJobs=false).
	Priority priority.Config

	// DisablePrioritizedJobs is Priority.Disabled; the engine honours
	// either.
	//
	// Deprecated: use Priority.Disabled.
	DisablePrioritizedJobs bool

	// Retry is the engine-wide retry setting (package retrypolicy):
	// Retry.DefaultCycle is the ISO-8601 retry time cycle (Camunda's
	// failedJobRetryTimeCycle) of jobs whose job definition declares none
	// and of plain River jobs that kept River's default MaxAttempts. See
	// retrypolicy.Config for what it applies to, and RetryPolicy for what a
	// cycle does. NewEngine rejects an invalid cycle.
	Retry retrypolicy.Config

	// DefaultRetryCycle is Retry.DefaultCycle, honoured when that is empty;
	// NewEngine refuses a configuration that sets both to different cycles.
	//
	// Deprecated: use Retry.DefaultCycle.
	DefaultRetryCycle string

	// ExclusiveScope says which exclusive jobs never run at the same time,
	// across every client on the database. The zero value,
	// exclusive.ProcessInstance, is Camunda's rule: two exclusive jobs of one
	// process instance never do. exclusive.RootProcessInstance widens it to
	// one process hierarchy. Jobs are exclusive by default (a job definition
	// opts out with NonExclusive); jobs without a process instance, and
	// non-exclusive jobs, are never held back.
	//
	// exclusive.None opts out: jobs still record their exclusive flag, but
	// the fetch is River's own query and nothing is sequenced. With None and
	// Liveness.Disabled, the engine's clients fetch exactly like stock River.
	//
	// Exclusivity combines with every Acquisition option of the engine's
	// drivers (see Acquisition for what a job's key and order then mean).
	//
	// The scope in force is recorded in the schema (migration riverbpmn/021,
	// exclusive.ScopeInForce): the first client that starts records its
	// engine's scope, and a client whose engine has another one refuses to
	// start with an error naming both (exclusive.ErrScopeMismatch), since
	// clients with different scopes take different keys and do not exclude
	// each other. Engine.SetExclusiveScope changes the record, once every
	// client of the schema is stopped. Give clients the engine's Middleware
	// (NewClient does): it gives a key back the moment the job's work
	// returns.
	//
	// Deprecated: use Exclusive.Scope.
	ExclusiveScope exclusive.Scope

	// ExclusiveLookahead bounds how many available jobs one fetch looks at to
	// find jobs whose key is free (0 means exclusive.DefaultLookahead). Only a
	// queue whose head is a long run of jobs of held keys reaches it; jobs
	// behind that run then wait for the head to drain.
	//
	// Deprecated: use Exclusive.Lookahead.
	ExclusiveLookahead int

	// ExclusiveWakeCooldown is the shortest time between two notifications
	// that wake a queue's producers when a key is given back while jobs of
	// that key wait (0 means exclusive.DefaultWakeCooldown).
	//
	// Deprecated: use Exclusive.WakeCooldown.
	ExclusiveWakeCooldown time.Duration

	// ExclusiveBatch, above 1, makes a fetch take runs of exclusive jobs,
	// as Camunda's job executor hands the exclusive jobs of one process
	// instance acquired together to one thread: with the head of each key it
	// takes, the fetch also takes the key's next waiting jobs in the
	// client's order (under the same conditions: queue, kinds, due,
	// priority range, deployments), up to ExclusiveBatch jobs of one key and
	// up to the fetch's size overall, and the client runs them one after
	// another, in that order, holding the key once: it is taken with the
	// run and given back after the run's last job. That spares the per-job
	// cost of taking and giving back a key. The price: the jobs of a run are
	// running in the database (River UI shows them so) while they wait for
	// their turn in the client's worker slots, and a fetch that takes runs
	// takes fewer keys. 0 or 1 takes one job per key (the head), the fetch
	// exactly as without this option. Needs the engine's Middleware (which
	// runs a run in order) and migration riverbpmn/018. Clients with and
	// without batching may share a database. Keep a run's total duration
	// well under River's RescueStuckJobsAfter: the rescuer judges every job
	// of a run by the time the run was fetched.
	//
	// Deprecated: use Exclusive.Batch.
	ExclusiveBatch int

	// Exclusive are the exclusive jobs' settings (exclusive.Config): the
	// scope (the zero value exclusive per process instance, as in Camunda;
	// exclusive.None opts out), the fetch's lookahead, the wake cooldown,
	// batching and the mechanism. Each replaces the deprecated flat field
	// of the same name above (ExclusiveScope, ...), whose documentation
	// says more: a flat field is honoured when its nested one is zero, and
	// NewEngine refuses the two set to different values, naming both.
	Exclusive exclusive.Config

	// Suspension are the suspensions' settings (see suspension.Config): how
	// late a change scheduled by another process is applied at most.
	Suspension suspension.Config

	// SuspensionServiceInterval is the former Suspension.ServiceInterval,
	// honoured when Suspension.ServiceInterval is zero; NewEngine refuses
	// both set to different values.
	//
	// Deprecated: use Suspension.ServiceInterval.
	SuspensionServiceInterval time.Duration

	// Liveness makes every client that works jobs prove to the database that
	// it is alive, so that the leader gives back a dead client's running jobs
	// (and frees their exclusive keys) within seconds, without using up an
	// execution, and a client that cannot prove it is alive cancels its own
	// jobs first (see package liveness). On by default (the zero value), on
	// an engine with a database pool; Liveness.Disabled opts out, and a
	// crashed client's jobs then wait for River's rescuer and use up an
	// attempt. It costs each client that works jobs one database connection
	// of its own, outside its pool, and one statement per PingInterval (two
	// a second with the defaults). It needs the engine's Middleware.
	Liveness liveness.Config

	// Logger receives the engine's own log messages. Nil means the logger of
	// the engine's most recently built client (river.Config.Logger).
	Logger *slog.Logger

	// JobControl are the settings of running jobs' progress (see
	// jobcontrol.Config): how often a running job's progress is written at
	// most.
	JobControl jobcontrol.Config

	// ProgressInterval is the former JobControl.ProgressInterval, honoured
	// when JobControl.ProgressInterval is zero; NewEngine refuses both set
	// to different values.
	//
	// Deprecated: use JobControl.ProgressInterval.
	ProgressInterval time.Duration

	// Events, when set, switches job status events on (see events.Config
	// and package events). Nil leaves them as the schema has them (off
	// unless enabled with Engine.Events().Enable).
	Events *events.Config

	// Lifecycle are the lifecycle's settings (see lifecycle.Config): how late
	// the elected leader discards a waiting job that expired, at most.
	Lifecycle lifecycle.Config

	// ExpiryServiceInterval is the former Lifecycle.ExpiryServiceInterval,
	// honoured when Lifecycle.ExpiryServiceInterval is zero; NewEngine
	// refuses both set to different values.
	//
	// Deprecated: use Lifecycle.ExpiryServiceInterval.
	ExpiryServiceInterval time.Duration

	// Timers are the timers' settings (see timer.Config): how long an
	// ended timer is kept before the elected leader deletes it.
	Timers timer.Config

	// TimerRetention is the former Timers.Retention, honoured when
	// Timers.Retention is zero; NewEngine refuses both set to different
	// values.
	//
	// Deprecated: use Timers.Retention.
	TimerRetention time.Duration

	// Telemetry says where the engine's OpenTelemetry measurements go (see
	// package telemetry): the zero value uses the global meter provider, as
	// River's otelriver does, so with no provider set anywhere every
	// instrument is a no-op. The engine's clients also give the span of each
	// job's work (otelriver's, or any current span) the job's BPMN identity.
	Telemetry telemetry.Config
}

// Engine is riverbpmn's entry point: it holds the configuration and builds
// what a River client needs to run with BPMN job-executor semantics.
//
//	engine, err := workflow.NewEngine(dbPool, &workflow.Config{Schema: ..., ...})
//	client, err := workflow.NewClient(engine, &river.Config{Queues: ..., Workers: ...})
type Engine struct {
	config     Config
	defs       *definitions
	dbPool     *pgxpool.Pool
	driver     *Driver
	middleware *middleware

	// defaultRetryCycle is Config.Retry.DefaultCycle, parsed; zero if none.
	defaultRetryCycle retrypolicy.Cycle
	exclusive         *exclusive.Keeper
	// tel holds the engine's instruments (Config.Telemetry); telHook is
	// its River hook, given to every client (ClientConfig).
	tel     *telemetry.Instruments
	telHook rivertype.Hook

	// deployments is the handle on deployed models (Deployments); drivers
	// are the engine's drivers, which deployments made through it are
	// registered with.
	deployments     *deployment.Deployments
	deploymentsOnce sync.Once

	driversMu sync.Mutex
	drivers   []*Driver

	// The feature handles (Events, Timers, Suspensions, Bulk, Lifecycle,
	// Incidents, Jobs, Definitions, Instances, Indexes, Queues, Sessions,
	// Exclusive, Overviews), each built on e.db() at its accessor's first
	// call.
	events          lazy[*events.Events]
	timers          lazy[*timer.Timers]
	suspensions     lazy[*suspension.Suspensions]
	bulk            lazy[*bulk.Operations]
	lifecycle       lazy[*lifecycle.Lifecycle]
	incidents       lazy[*incident.Incidents]
	jobs            lazy[*job.Jobs]
	definitions     lazy[*definition.Definitions]
	instances       lazy[*instance.Instances]
	indexes         lazy[*index.Indexes]
	queues          lazy[*queue.Queues]
	sessions        lazy[*session.Sessions]
	exclusiveHandle lazy[*exclusive.Exclusive]
	overviews       lazy[*overview.Overviews]

	// liveRuns maps the job attempts fetched by the engine's clients with
	// liveness to their run (liveness.go), for the middleware.
	liveRuns sync.Map // liveRunID -> *liveRun
	// middlewareUsed is set once Middleware was called.
	middlewareUsed atomic.Bool
	// middlewareBases are the bases the middleware handed River, until the
	// pilot of the client being built claims one (middleware_wiring.go).
	middlewareBases middlewareBases
	// clientLogger is the logger of the most recently built client.
	clientLogger atomic.Pointer[slog.Logger]
	// contextForm is the form of the job context the schema holds
	// (jobcontext_form.go).
	contextForm contextForm
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
	retryField := "Retry.DefaultCycle"
	if config.Retry.DefaultCycle == "" {
		retryField = "DefaultRetryCycle"
	}
	if config, err = nestRetryAndPriority(config); err != nil {
		return nil, err
	}
	if config, err = nestExclusive(config); err != nil {
		return nil, err
	}
	defaultRetryCycle, err := parseDefaultRetryCycle(config.Retry.DefaultCycle, retryField)
	if err != nil {
		return nil, err
	}
	if err := config.ExclusiveScope.Validate(); err != nil {
		return nil, fmt.Errorf("workflow: Config.ExclusiveScope: %w", err)
	}
	if config.ExclusiveBatch < 0 {
		return nil, fmt.Errorf("workflow: Config.ExclusiveBatch must not be negative, got %d", config.ExclusiveBatch)
	}
	if config.ExclusiveBatch > exclusive.MaxBatch {
		return nil, fmt.Errorf("workflow: Config.ExclusiveBatch must be at most %d, got %d", exclusive.MaxBatch, config.ExclusiveBatch)
	}
	if config.ExclusiveBatch > 1 && !config.ExclusiveScope.Enabled() {
		return nil, fmt.Errorf("workflow: Config.ExclusiveBatch %d needs an enforcing ExclusiveScope, not exclusive.None (it batches the exclusive jobs of one key)", config.ExclusiveBatch)
	}
	if config.ExclusiveLookahead < 0 {
		return nil, fmt.Errorf("workflow: Config.ExclusiveLookahead must not be negative, got %d", config.ExclusiveLookahead)
	}
	if err := config.Liveness.Validate(); err != nil {
		return nil, fmt.Errorf("workflow: Config.Liveness: %w", err)
	}
	if err := validateJobControl(config); err != nil {
		return nil, err
	}
	if err := validateTimers(config); err != nil {
		return nil, err
	}
	if err := validateSuspension(config); err != nil {
		return nil, err
	}
	if err := validateLifecycle(config); err != nil {
		return nil, err
	}
	e := &Engine{config: *config, defs: defs, defaultRetryCycle: defaultRetryCycle, dbPool: dbPool}
	var figuresDB telemetry.DB
	if dbPool != nil {
		figuresDB = dbPool
	}
	if e.tel, err = telemetry.New(config.Telemetry, telemetry.ContextReader{Scope: e.config.ExclusiveScope}, figuresDB); err != nil {
		return nil, fmt.Errorf("workflow: Config.Telemetry: %w", err)
	}
	e.telHook = e.tel.Hook()
	e.driver = newDriver(e, dbPool, Acquisition{})
	e.drivers = []*Driver{e.driver}
	e.middleware = &middleware{engine: e}
	e.initExclusive()
	return e, nil
}

// livenessOn reports whether the engine's clients run with liveness: unless
// Config.Liveness.Disabled, on an engine with a database pool (without one,
// its clients cannot work jobs).
func (e *Engine) livenessOn() bool { return !e.config.Liveness.Disabled && e.dbPool != nil }

// Driver returns the engine's River driver with stock acquisition, the one
// NewClient builds clients on. Any number of clients may share it; each gets
// its own pilot.
func (e *Engine) Driver() *Driver { return e.driver }

// NewDriver returns a River driver whose clients acquire jobs as acq says.
// Give each client that needs its own acquisition, or its own set of
// registered deployments, a driver of its own: the deployments registered on
// a driver are those of the clients built from it. Build its clients with
// driver.NewClient(config).
//
// Every acquisition option combines with every other and with exclusive
// execution (Config.ExclusiveScope): the client's fetch query is assembled
// from the options it enables (see Acquisition for the semantics).
func (e *Engine) NewDriver(acq Acquisition) (*Driver, error) {
	if err := acq.Validate(); err != nil {
		return nil, err
	}
	if acq.PriorityRange != nil || acq.DeploymentAware {
		e.exclusive.SetFiltered()
	}
	acq.Deployments = slices.Clone(acq.Deployments)
	acq.TenantWeights = maps.Clone(acq.TenantWeights)
	if acq.PriorityRange != nil {
		r := *acq.PriorityRange
		acq.PriorityRange = &r
	}
	d := newDriver(e, e.dbPool, acq)
	e.driversMu.Lock()
	e.drivers = append(e.drivers, d)
	e.driversMu.Unlock()
	return d, nil
}

// Middleware returns the engine's River middleware. On the insert path it
// gives inserted jobs their job context (finding a job's job definition by
// kind when the context names none) and their number of executions
// (MaxAttempts) from their retry cycle; River runs it for all six insert
// calls. On the work path it applies the retry bookkeeping of conflict
// failures (see ErrConflict) and gives a job's exclusive key back as soon as
// the job's work returns, gives the work its progress reporter
// (handlers.Progress), and ends a job whose stop request reached it ABORTED
// (see StopJob). A client on the engine's driver without it refuses
// to start and to insert (ErrClientNotWired); NewClient adds it for you.
func (e *Engine) Middleware() rivertype.Middleware {
	e.middlewareUsed.Store(true)
	return e.middleware
}

// logger returns where the engine logs: Config.Logger, else the logger of
// its most recently built client, else slog.Default (no client built yet).
func (e *Engine) logger() *slog.Logger {
	if e.config.Logger != nil {
		return e.config.Logger
	}
	if l := e.clientLogger.Load(); l != nil {
		return l
	}
	return slog.Default()
}
