package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of riverbpmn's meter.
const ScopeName = "github.com/riverbpmn/riverbpmn"

// DefaultFiguresInterval is how long the leader keeps the figures it read
// from the database before it reads them again (Config.FiguresInterval).
const DefaultFiguresInterval = 30 * time.Second

// figuresTimeout bounds one read of the database figures.
const figuresTimeout = 5 * time.Second

// Config says where riverbpmn's measurements go.
type Config struct {
	// MeterProvider receives riverbpmn's instruments. Nil means the global
	// one (otel.GetMeterProvider), as River's otelriver does: with neither
	// set, every instrument is a no-op.
	MeterProvider metric.MeterProvider

	// TenantAttribute adds the job's tenant (riverbpmn.tenant) to the jobs
	// taken by fetches (riverbpmn.acquisition.jobs), to see each tenant's
	// share. Off by default: the number of tenants may be unbounded, and so
	// would the number of time series.
	TenantAttribute bool

	// FiguresInterval is how long the elected leader keeps the figures it
	// reads from the database (open incidents, oldest available job, keys
	// of dead clients, held jobs, suspended definitions, event
	// subscriptions) before it reads them again at the next collection. 0
	// means DefaultFiguresInterval; a negative value reads none.
	FiguresInterval time.Duration
}

// Validate reports a configuration error, naming the field.
func (c Config) Validate() error {
	if c.FiguresInterval > 0 && c.FiguresInterval < time.Second {
		return fmt.Errorf("telemetry: Config.FiguresInterval %s is under a second; each read is a scan of the database (0 means %s, negative reads none)", c.FiguresInterval, DefaultFiguresInterval)
	}
	return nil
}

// Identity is what a job's row says about it, read by a JobReader (the
// engine's is ContextReader, which reads the job context).
type Identity struct {
	// HasContext is false for a plain River job (no job context).
	HasContext           bool
	ProcessInstanceID    string
	ActivityID           string
	JobDefinitionID      string
	ProcessDefinitionKey string
	TenantID             string
	RetryCycle           string
	// Timer is true for an occurrence of a timer (job type timer).
	Timer bool
	// ExclusiveKey is the key the job takes under the engine's exclusive
	// scope; empty when it takes none.
	ExclusiveKey string
}

// Instruments holds every riverbpmn instrument of one engine. The zero of
// each is never used: New makes them all, from the configured provider. A
// nil *Instruments records nothing.
type Instruments struct {
	cfg   Config
	jobs  JobReader
	meter metric.Meter

	fetches       metric.Int64Counter
	jobsTaken     metric.Int64Counter
	exclusiveWait metric.Float64Histogram
	keyHeld       metric.Float64Histogram
	retries       metric.Int64Counter
	conflicts     metric.Int64Counter
	incOpened     metric.Int64Counter
	incResolved   metric.Int64Counter
	timerLateness metric.Float64Histogram
	fences        metric.Int64Counter
	takeovers     metric.Int64Counter
	givenBack     metric.Int64Counter
	expired       metric.Int64Counter

	keysHeldSkipped metric.Int64Counter // acquisition_skipped.go

	// sessions reads the sessions opened by the engine's clients
	// (riverbpmn.liveness.sessions); the engine registers its keepers.
	sessionsMu      sync.Mutex
	sessionSources  []func() int64
	sessionsCounter metric.Int64ObservableCounter

	// series caches the attribute sets of measurements (series.go).
	series seriesCache

	figures *figures

	// Registrations of the observable instruments' callbacks.
	registrations []metric.Registration
	closed        atomic.Bool
}

// Names of riverbpmn's attributes.
const (
	AttrQueue             = attribute.Key("queue")
	AttrKind              = attribute.Key("kind")
	AttrJobDefinition     = attribute.Key("riverbpmn.job_definition")
	AttrProcessDefinition = attribute.Key("riverbpmn.process_definition")
	AttrTenant            = attribute.Key("riverbpmn.tenant")
	AttrOrder             = attribute.Key("riverbpmn.acquisition.order")
	AttrRetryCycle        = attribute.Key("riverbpmn.retry_cycle")
	AttrExpiredBy         = attribute.Key("riverbpmn.expired_by")
	AttrHoldReason        = attribute.Key("riverbpmn.hold.reason")
	AttrDefinitionType    = attribute.Key("riverbpmn.definition.type")
	AttrSubscription      = attribute.Key("riverbpmn.subscription")
)

// New makes every instrument of cfg's provider; jobs reads a job's
// identity; db, when non-nil and cfg.FiguresInterval is not negative,
// serves the database figures (read by the elected leader only: see
// Leader).
func New(cfg Config, jobs JobReader, db DB) (*Instruments, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	provider := cfg.MeterProvider
	if provider == nil {
		provider = otel.GetMeterProvider()
	}
	t := &Instruments{cfg: cfg, jobs: jobs, meter: provider.Meter(ScopeName)}
	m := t.meter
	var errs []error
	counter := func(name, desc, unit string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600))
		errs = append(errs, err)
		return h
	}
	t.fetches = counter(NameFetches, "Fetches made by the engine's clients.", "{fetch}")
	t.jobsTaken = counter(NameJobsTaken, "Jobs taken by fetches (moved to running).", "{job}")
	t.keysHeldSkipped = counter(NameKeysHeldSkipped, keysHeldSkippedDescription, "{job}")
	t.exclusiveWait = histogram(NameExclusiveWait, "From due to start, of jobs that took an exclusive key: an upper bound of the time each waited for its key.")
	t.keyHeld = histogram(NameKeyHeld, "How long a job held its exclusive key: from its work's start to the key being given back.")
	t.retries = counter(NameRetries, "Failed executions retried later, by retry cycle.", "{retry}")
	t.conflicts = counter(NameConflicts, "Concurrency conflicts that gave their execution back (ErrConflict).", "{conflict}")
	t.incOpened = counter(NameIncidentsOpened, "Incidents opened by executions of the engine's clients: a job with a job context failed its last execution.", "{incident}")
	t.incResolved = counter(NameIncidentsResolved, "Incidents resolved through the engine (SetJobRetries, bulk retry).", "{incident}")
	t.timerLateness = histogram(NameTimerLateness, "How late each timer occurrence started: from its due time to its first execution's start.")
	t.fences = counter(NameFences, "Liveness sessions fenced: a client that could not prove it is alive cancelled its jobs.", "{fence}")
	t.takeovers = counter(NameTakeovers, "Dead clients taken over by the leader.", "{takeover}")
	t.givenBack = counter(NameJobsGivenBack, "Running jobs of dead clients given back by the leader, without using an execution.", "{job}")
	t.expired = counter(NameJobsExpired, "Jobs discarded because they expired before they ran.", "{job}")
	var err error
	t.sessionsCounter, err = m.Int64ObservableCounter(NameSessions,
		metric.WithDescription("Liveness sessions opened by the engine's clients in this process."), metric.WithUnit("{session}"))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("telemetry: making instruments: %w", err)
	}
	reg, err := m.RegisterCallback(t.observeSessions, t.sessionsCounter)
	if err != nil {
		return nil, fmt.Errorf("telemetry: registering callback: %w", err)
	}
	t.registrations = append(t.registrations, reg)
	if db != nil && cfg.FiguresInterval >= 0 {
		if err := t.newFigures(db); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Close unregisters the callbacks of the observable instruments; the
// instruments record nothing more.
func (t *Instruments) Close() error {
	if t == nil || !t.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	for _, r := range t.registrations {
		errs = append(errs, r.Unregister())
	}
	return errors.Join(errs...)
}

// Fences counts a fence of a client's liveness session.
func (t *Instruments) Fences(ctx context.Context) {
	if t == nil {
		return
	}
	t.fences.Add(ctx, 1)
}

// Takeover counts a dead client taken over, and the running jobs it gave
// back.
func (t *Instruments) Takeover(ctx context.Context, jobs int) {
	if t == nil {
		return
	}
	t.takeovers.Add(ctx, 1)
	t.givenBack.Add(ctx, int64(jobs))
}

// SessionsFrom adds a source of the number of liveness sessions a client
// opened (liveness.Keeper.Sessions), read at each collection.
func (t *Instruments) SessionsFrom(opened func() int64) {
	if t == nil {
		return
	}
	t.sessionsMu.Lock()
	defer t.sessionsMu.Unlock()
	t.sessionSources = append(t.sessionSources, opened)
}

func (t *Instruments) observeSessions(_ context.Context, o metric.Observer) error {
	t.sessionsMu.Lock()
	defer t.sessionsMu.Unlock()
	var n int64
	for _, opened := range t.sessionSources {
		n += opened()
	}
	o.ObserveInt64(t.sessionsCounter, n)
	return nil
}

// Expired counts n jobs discarded because they expired: by the leader's
// expiry service (by "leader") or by the work path of the client that
// fetched one (by "work").
func (t *Instruments) Expired(ctx context.Context, n int64, by string) {
	if t == nil || n <= 0 {
		return
	}
	t.expired.Add(ctx, n, metric.WithAttributes(AttrExpiredBy.String(by)))
}

// IncidentsChanged counts incidents opened and resolved through the
// engine's management calls (SetJobRetries, bulk retries).
func (t *Instruments) IncidentsChanged(ctx context.Context, opened, resolved int64) {
	if t == nil {
		return
	}
	if opened > 0 {
		t.incOpened.Add(ctx, opened)
	}
	if resolved > 0 {
		t.incResolved.Add(ctx, resolved)
	}
}
