package workflow

// Running jobs (as the CNES REGARDS jobs module shows them): progress, stop,
// and job status events. The logic
// and SQL live in packages jobcontrol and events; these are the engine's
// thin front doors.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/events"
	"github.com/riverbpmn/riverbpmn/internal/roundloop"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// Defaults of EventsConfig.
const (
	DefaultEventsRetention     = 24 * time.Hour
	DefaultEventsPruneInterval = time.Minute
)

// EventsConfig switches job status events on for an engine's clients
// (Config.Events): a client that starts enables them in its schema (see
// package events; a no-op when already on), and the client elected leader
// prunes the outbox. Events stay on for every client of the schema until
// DisableEvents.
type EventsConfig struct {
	// Retention is how long events are kept (DefaultEventsRetention if 0).
	// A subscriber away for longer misses the events pruned meanwhile.
	Retention time.Duration
	// PruneInterval is how often the leader prunes
	// (DefaultEventsPruneInterval if 0).
	PruneInterval time.Duration
}

func (c *EventsConfig) validate() error {
	if c == nil {
		return nil
	}
	if c.Retention < 0 {
		return fmt.Errorf("workflow: Config.Events.Retention must not be negative, got %s", c.Retention)
	}
	if c.PruneInterval < 0 {
		return fmt.Errorf("workflow: Config.Events.PruneInterval must not be negative, got %s", c.PruneInterval)
	}
	return nil
}

func (c *EventsConfig) retention() time.Duration {
	if c.Retention == 0 {
		return DefaultEventsRetention
	}
	return c.Retention
}

func (c *EventsConfig) pruneInterval() time.Duration {
	if c.PruneInterval == 0 {
		return DefaultEventsPruneInterval
	}
	return c.PruneInterval
}

// validateJobControl checks the configuration of progress and events.
func validateJobControl(config *Config) error {
	if config.ProgressInterval < 0 {
		return fmt.Errorf("workflow: Config.ProgressInterval must not be negative, got %s", config.ProgressInterval)
	}
	return config.Events.validate()
}

// workControl is the work path of progress and stop: the job's progress
// reporter is in the context its work gets (written when the work returns),
// and a job whose stop request reached it ends ABORTED (jobcontrol.WorkStop).
func (e *Engine) workControl(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if e.dbPool == nil {
		return doInner(ctx)
	}
	schema := e.workSchema(ctx)
	return jobcontrol.WorkWithProgress(ctx, e.dbPool, schema, job.ID, job.Attempt, e.config.ProgressInterval, func(ctx context.Context) error {
		return jobcontrol.WorkStop(ctx, e.dbPool, schema, job, doInner)
	})
}

// workSchema is the schema of the client working a job.
func (e *Engine) workSchema(ctx context.Context) string {
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		return client.Schema()
	}
	return e.config.Schema
}

// StopJob asks job jobID to stop (REGARDS' stopJob), asynchronously: a job
// waiting to run is cancelled at once and never starts (ABORTED); a running
// job's context is cancelled by whichever client runs it, in any process, and
// the job ends ABORTED when its work returns (give clients the engine's
// Middleware); a finished job is left as it is, and the result says so.
// Asking again is harmless. An aborted job opens no incident. In River terms
// ABORTED is state cancelled with "cancel_attempted_at" in metadata. An
// unknown id gives an error wrapping ErrNotFound.
func (e *Engine) StopJob(ctx context.Context, jobID int64) (*jobcontrol.StopResult, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	results, err := jobcontrol.StopJobs(ctx, e.dbPool, e.config.Schema, []int64{jobID})
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("workflow: stopping job %d: %w", jobID, ErrNotFound)
	}
	return &results[0], nil
}

// StopProcessInstance asks every job of a process instance to stop, in one
// statement, as StopJob does for one; it returns one result per job (none
// for an instance without jobs).
func (e *Engine) StopProcessInstance(ctx context.Context, processInstanceID string) ([]jobcontrol.StopResult, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return jobcontrol.StopProcessInstance(ctx, e.dbPool, e.config.Schema, processInstanceID)
}

// EnableEvents switches job status events on in the engine's schema (see
// package events). Idempotent.
func (e *Engine) EnableEvents(ctx context.Context) error {
	if e.dbPool == nil {
		return errNoPool
	}
	return events.Enable(ctx, e.dbPool, e.config.Schema)
}

// DisableEvents switches job status events off in the engine's schema: from
// then on no event is recorded and nothing is paid for them. Clients of an
// engine with Config.Events switch them on again when they start.
func (e *Engine) DisableEvents(ctx context.Context) error {
	if e.dbPool == nil {
		return errNoPool
	}
	return events.Disable(ctx, e.dbPool, e.config.Schema)
}

// EventsEnabled says whether job status events are on in the engine's schema.
func (e *Engine) EventsEnabled(ctx context.Context) (bool, error) {
	if e.dbPool == nil {
		return false, errNoPool
	}
	return events.Enabled(ctx, e.dbPool, e.config.Schema)
}

// SubscribeEvents follows job status events from any process connected to
// the database (see events.Subscribe); cfg.Schema defaults to the engine's.
// It blocks until ctx is done or handle returns an error.
func (e *Engine) SubscribeEvents(ctx context.Context, cfg *events.SubscribeConfig, handle func(context.Context, []events.Event) error) error {
	if e.dbPool == nil {
		return errNoPool
	}
	c := events.SubscribeConfig{}
	if cfg != nil {
		c = *cfg
	}
	if c.Schema == "" {
		c.Schema = e.config.Schema
	}
	return events.Subscribe(ctx, e.dbPool, &c, handle)
}

// ReadEvents returns at most limit job status events after cursor, in cursor
// order, from transactions that have ended (see events.Read). When events
// after the cursor were pruned before they were read it fails with a
// *events.GapError (errors.Is events.ErrPruned; see events.ReadChecked).
func (e *Engine) ReadEvents(ctx context.Context, after events.Cursor, limit int) ([]events.Event, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	batch, _, err := events.ReadChecked(ctx, e.dbPool, e.config.Schema, after, limit)
	return batch, err
}

// EventsPage returns at most limit job status events before the cursor
// before (nil: from the newest), newest first, only those of
// processInstanceID when it is not empty: the page an operator reads (see
// events.ReadBackward, which says how far a filtered page looks). Pass the
// page's Older as before for the next page.
func (e *Engine) EventsPage(ctx context.Context, before *events.Cursor, processInstanceID string, limit int) (*events.Page, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return events.ReadBackward(ctx, e.dbPool, e.config.Schema, before, processInstanceID, limit)
}

// CountEvents returns how many job status events are recorded, only those
// of processInstanceID when it is not empty; atLeast says the count stopped
// after events.CountRows outbox rows (see events.Count).
func (e *Engine) CountEvents(ctx context.Context, processInstanceID string) (n int64, atLeast bool, err error) {
	if e.dbPool == nil {
		return 0, false, errNoPool
	}
	return events.Count(ctx, e.dbPool, e.config.Schema, processInstanceID)
}

// LastEvent returns the cursor of the last event written; ok is false when
// there is none (see events.Last).
func (e *Engine) LastEvent(ctx context.Context) (c events.Cursor, ok bool, err error) {
	if e.dbPool == nil {
		return events.Cursor{}, false, errNoPool
	}
	return events.Last(ctx, e.dbPool, e.config.Schema)
}

// EventsNow returns the cursor of "from now on" (see events.Now).
func (e *Engine) EventsNow(ctx context.Context) (events.Cursor, error) {
	if e.dbPool == nil {
		return events.Cursor{}, errNoPool
	}
	return events.Now(ctx, e.dbPool)
}

// PruneEvents deletes the events written before olderThan and returns how
// many it deleted. The leader does it on its own with Config.Events.
func (e *Engine) PruneEvents(ctx context.Context, olderThan time.Time) (int64, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	return events.Prune(ctx, e.dbPool, e.config.Schema, olderThan, 0)
}

// PruneEventsCount returns how many events PruneEvents with olderThan
// would delete now.
func (e *Engine) PruneEventsCount(ctx context.Context, olderThan time.Time) (int64, error) {
	if e.dbPool == nil {
		return 0, errNoPool
	}
	return events.PruneCount(ctx, e.dbPool, e.config.Schema, olderThan)
}

// startEvents runs when a client starts: with Config.Events, it switches
// events on.
func (e *Engine) startEvents(ctx context.Context) error {
	if e.config.Events == nil || e.dbPool == nil {
		return nil
	}
	return e.EnableEvents(ctx)
}

// eventsMaintenanceServices is the leader's outbox pruner, with
// Config.Events.
func (e *Engine) eventsMaintenanceServices() []startstop.Service {
	if e == nil || e.config.Events == nil || e.dbPool == nil {
		return nil
	}
	return []startstop.Service{&eventsPruner{engine: e, config: e.config.Events}}
}

// eventsPruner is the leader's service deleting job status events older than
// the retention, every prune interval. It has a type of its own because
// River keys maintenance services by type name.
type eventsPruner struct {
	startstop.BaseStartStop

	engine *Engine
	config *EventsConfig
}

// Start starts the pruner's rounds until Stop (or ctx's end).
func (p *eventsPruner) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := p.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, func(ctx context.Context) time.Duration {
		if _, err := p.engine.PruneEvents(ctx, time.Now().Add(-p.config.retention())); err != nil && ctx.Err() == nil {
			p.engine.logger().WarnContext(ctx, "riverbpmn: pruning job status events failed", slog.String("error", err.Error()))
		}
		return p.config.pruneInterval()
	})
	return nil
}

// EventSubscription returns a named event subscription's saved position and
// how far behind the latest event it is (see events.Subscription). An
// unknown name gives an error wrapping ErrNotFound.
func (e *Engine) EventSubscription(ctx context.Context, name string) (*events.Subscription, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	sub, err := events.GetSubscription(ctx, e.dbPool, e.config.Schema, name)
	if errors.Is(err, events.ErrSubscriptionNotFound) {
		return nil, fmt.Errorf("workflow: event subscription %q: %w", name, ErrNotFound)
	}
	return sub, err
}

// EventSubscriptions returns every named event subscription with its saved
// position and how far behind it is, by name.
func (e *Engine) EventSubscriptions(ctx context.Context) ([]events.Subscription, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return events.Subscriptions(ctx, e.dbPool, e.config.Schema)
}
