package telemetry

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"
	"go.opentelemetry.io/otel/metric"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var figuresSQL = sqltemplate.MustRead(sqlFS, "sql/figures.sql")

// DB is what the database figures need: a *pgxpool.Pool has it.
type DB = events.DB

// figures serves the observable gauges whose values only the database
// knows. Their callback reads the database only while a Leader service of
// the engine runs (River's elected leader: one client of the database), at
// most once per Config.FiguresInterval, and only when a reader collects:
// with no provider, nothing collects and nothing is read.
type figures struct {
	t        *Instruments
	db       DB
	interval time.Duration

	leaders atomic.Int32

	incidentsOpen      metric.Int64ObservableGauge
	oldestAvailable    metric.Float64ObservableGauge
	deadSessions       metric.Int64ObservableGauge
	deadKeys           metric.Int64ObservableGauge
	jobsHeld           metric.Int64ObservableGauge
	suspended          metric.Int64ObservableGauge
	subscriptionBehind metric.Int64ObservableGauge

	mu     sync.Mutex
	schema string    // the leader's schema
	readAt time.Time // zero: nothing read (or leadership lost since)
	rows   []figureRow
	subs   []events.Subscription
	reads  atomic.Int64 // database reads, for tests
}

type figureRow struct {
	figure, label string
	value         float64
}

func (t *Instruments) newFigures(db DB) error {
	f := &figures{t: t, db: db, interval: t.cfg.FiguresInterval}
	if f.interval == 0 {
		f.interval = DefaultFiguresInterval
	}
	m := t.meter
	var errs []error
	gauge := func(name, desc, unit string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return g
	}
	f.incidentsOpen = gauge(NameIncidentsOpen, "Open incidents, by job definition (read from the database by the leader).", "{incident}")
	f.deadSessions = gauge(NameDeadSessions, "Clients whose liveness session is dead and not yet taken over (read by the leader).", "{session}")
	f.deadKeys = gauge(NameDeadKeys, "Exclusive keys held by running jobs of dead clients (read by the leader).", "{key}")
	f.jobsHeld = gauge(NameJobsHeld, "Held jobs, by reason (read by the leader).", "{job}")
	f.suspended = gauge(NameDefinitionsSuspended, "Suspended job and process definitions, by type (read by the leader).", "{definition}")
	f.subscriptionBehind = gauge(NameSubscriptionBehind, "Committed events a named event subscription has yet to handle (read by the leader).", "{event}")
	var err error
	f.oldestAvailable, err = m.Float64ObservableGauge(NameOldestAvailable,
		metric.WithDescription("Age of the oldest available job of each queue: how long it has been due (read by the leader)."), metric.WithUnit("s"))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: making database figures: %w", err)
	}
	reg, err := m.RegisterCallback(f.observe, f.incidentsOpen, f.oldestAvailable, f.deadSessions, f.deadKeys, f.jobsHeld, f.suspended, f.subscriptionBehind)
	if err != nil {
		return fmt.Errorf("telemetry: registering database figures: %w", err)
	}
	t.registrations = append(t.registrations, reg)
	t.figures = f
	return nil
}

// observe reports the figures, reading them first when the last read is
// older than the interval; a client that is not the leader reports none.
func (f *figures) observe(ctx context.Context, o metric.Observer) error {
	if f.leaders.Load() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readAt.IsZero() || time.Since(f.readAt) >= f.interval {
		if err := f.read(ctx); err != nil {
			return err
		}
	}
	for _, r := range f.rows {
		switch r.figure {
		case "incidents_open":
			o.ObserveInt64(f.incidentsOpen, int64(r.value), metric.WithAttributes(AttrJobDefinition.String(r.label)))
		case "oldest_available":
			o.ObserveFloat64(f.oldestAvailable, r.value, metric.WithAttributes(AttrQueue.String(r.label)))
		case "dead_sessions":
			o.ObserveInt64(f.deadSessions, int64(r.value))
		case "dead_client_keys":
			o.ObserveInt64(f.deadKeys, int64(r.value))
		case "held":
			o.ObserveInt64(f.jobsHeld, int64(r.value), metric.WithAttributes(AttrHoldReason.String(r.label)))
		case "suspended":
			o.ObserveInt64(f.suspended, int64(r.value), metric.WithAttributes(AttrDefinitionType.String(r.label)))
		}
	}
	for _, s := range f.subs {
		o.ObserveInt64(f.subscriptionBehind, s.Behind, metric.WithAttributes(AttrSubscription.String(s.Name)))
	}
	return nil
}

// read reads every figure (called with mu held).
func (f *figures) read(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, figuresTimeout)
	defer cancel()
	f.reads.Add(1)
	rows, err := f.db.Query(ctx, sqltemplate.Render(figuresSQL, f.schema))
	if err != nil {
		return fmt.Errorf("telemetry: reading database figures: %w", err)
	}
	defer rows.Close()
	var read []figureRow
	for rows.Next() {
		var r figureRow
		if err := rows.Scan(&r.figure, &r.label, &r.value); err != nil {
			return fmt.Errorf("telemetry: reading database figures: %w", err)
		}
		read = append(read, r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("telemetry: reading database figures: %w", err)
	}
	subs, err := events.Subscriptions(ctx, f.db, f.schema)
	if err != nil {
		return fmt.Errorf("telemetry: reading database figures: %w", err)
	}
	f.rows, f.subs, f.readAt = read, subs, time.Now()
	return nil
}

// FigureReads returns how many times the database figures were read.
func (t *Instruments) FigureReads() int64 {
	if t == nil || t.figures == nil {
		return 0
	}
	return t.figures.reads.Load()
}

// Leader returns the service that makes this engine report the database
// figures of schema while it runs: River runs it on its elected leader only
// (the engine returns it from its pilot's maintenance services), so one
// client of the database reports them. Nil when there are no figures to
// report.
func (t *Instruments) Leader(schema string) startstop.Service {
	if t == nil || t.figures == nil {
		return nil
	}
	return &Leader{f: t.figures, schema: schema}
}

// Leader is the service of Instruments.Leader. It is a type of its own:
// River keys maintenance services by type name.
type Leader struct {
	startstop.BaseStartStop

	f      *figures
	schema string
}

// Start makes the engine report the figures until ctx ends or Stop.
func (l *Leader) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := l.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	l.f.mu.Lock()
	l.f.schema = l.schema
	l.f.mu.Unlock()
	l.f.leaders.Add(1)
	go func() {
		defer stopped()
		started()
		<-ctx.Done()
		l.f.leaders.Add(-1)
		l.f.mu.Lock()
		l.f.readAt, l.f.rows, l.f.subs = time.Time{}, nil, nil
		l.f.mu.Unlock()
	}()
	return nil
}
