package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
	"github.com/riverbpmn/riverbpmn/internal/roundloop"
)

// Defaults of Config.
const (
	DefaultRetention     = 24 * time.Hour
	DefaultPruneInterval = time.Minute
)

// Config switches job status events on for an engine's clients
// (workflow.Config.Events): a client that starts enables them in its schema
// (a no-op when already on), and the client elected leader prunes the outbox
// (Pruner). Events stay on for every client of the schema until
// Events.Disable.
type Config struct {
	// Retention is how long events are kept (DefaultRetention if 0). A
	// subscriber away for longer misses the events pruned meanwhile.
	Retention time.Duration
	// PruneInterval is how often the leader prunes (DefaultPruneInterval if
	// 0).
	PruneInterval time.Duration
}

// Validate checks the configuration; a nil Config is valid (events left as
// the schema has them).
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	if c.Retention < 0 {
		return fmt.Errorf("Retention must not be negative, got %s", c.Retention)
	}
	if c.PruneInterval < 0 {
		return fmt.Errorf("PruneInterval must not be negative, got %s", c.PruneInterval)
	}
	return nil
}

func (c *Config) retention() time.Duration {
	if c.Retention == 0 {
		return DefaultRetention
	}
	return c.Retention
}

func (c *Config) pruneInterval() time.Duration {
	if c.PruneInterval == 0 {
		return DefaultPruneInterval
	}
	return c.PruneInterval
}

// HandleConfig configures an Events handle.
type HandleConfig struct {
	// DB is the database; *pgxpool.Pool has what it needs.
	DB ListenDB
	// Schema is the schema of River's and riverbpmn's tables; empty means
	// the connection's search_path.
	Schema string
	// NotFound, if set, is wrapped by the error of Subscription for an
	// unknown name, beside ErrSubscriptionNotFound (the engine passes its
	// ErrNotFound); nil means ErrNotFound.
	NotFound error
}

// Events is the handle on a schema's job status events, bound to a
// database and a schema once (workflow.Engine.Events): switch them on and
// off, list them a page at a time, read and follow them, count and prune
// them, and see how far named subscriptions are behind.
type Events struct {
	db       ListenDB
	schema   string
	notFound error
}

// ErrNotFound is wrapped by the handle's errors for an id or a name that
// names nothing: the one not-found error of every riverbpmn package
// (workflow.ErrNotFound, job.ErrNotFound, ... are this same value).
var ErrNotFound = notfound.Err

// New returns an Events handle.
func New(config HandleConfig) *Events {
	if config.NotFound == nil {
		config.NotFound = ErrNotFound
	}
	return &Events{db: config.DB, schema: config.Schema, notFound: config.NotFound}
}

// Enable switches job status events on in the schema (Enable). Idempotent.
func (e *Events) Enable(ctx context.Context) error { return Enable(ctx, e.db, e.schema) }

// Disable switches job status events off in the schema: from then on no
// event is recorded and nothing is paid for them. Clients of an engine with
// workflow.Config.Events switch them on again when they start.
func (e *Events) Disable(ctx context.Context) error { return Disable(ctx, e.db, e.schema) }

// Enabled says whether job status events are on in the schema.
func (e *Events) Enabled(ctx context.Context) (bool, error) { return Enabled(ctx, e.db, e.schema) }

// ListParams selects a page of events for List.
type ListParams struct {
	// ProcessInstanceID keeps only that process instance's events ("" all).
	ProcessInstanceID string
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is where the page starts: "" for the newest event, else the
	// Next of the previous page.
	After string
}

// ListResult is a page of events, newest first.
type ListResult struct {
	// Items are the page's events, newest first.
	Items []Event `json:"items"`
	// Next is the After of the next, older page; "" when there is none.
	Next string `json:"next,omitempty"`
}

// List returns a page of events, newest first: the page an operator reads
// (see ReadBackward for what a page shows and what it costs, with and
// without a process instance). Next is empty exactly when no older event
// (of the instance) is left.
func (e *Events) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("events", params.Limit)
	if err != nil {
		return nil, err
	}
	var before *Cursor
	if params.After != "" {
		c, err := ParseCursor(params.After)
		if err != nil {
			return nil, fmt.Errorf("events: ListParams.After %q is not a cursor of this listing (txid:id, as ListResult.Next gives)", params.After)
		}
		before = &c
	}
	page, err := ReadBackward(ctx, e.db, e.schema, before, params.ProcessInstanceID, limit)
	if err != nil {
		return nil, err
	}
	res := &ListResult{Items: page.Events}
	if res.Items == nil {
		res.Items = []Event{}
	}
	if page.More {
		res.Next = page.Older.String()
	}
	return res, nil
}

// Read returns at most limit events after the cursor after, in cursor order,
// from transactions that have ended: what a subscriber follows (see
// ReadChecked). When events after the cursor were pruned before they were
// read it fails with a *GapError (errors.Is ErrPruned).
func (e *Events) Read(ctx context.Context, after Cursor, limit int) ([]Event, error) {
	batch, _, err := ReadChecked(ctx, e.db, e.schema, after, limit)
	return batch, err
}

// Subscribe follows job status events from any process connected to the
// database (see the package function Subscribe); cfg.Schema defaults to the
// handle's. It blocks until ctx is done or handle returns an error.
func (e *Events) Subscribe(ctx context.Context, cfg *SubscribeConfig, handle func(context.Context, []Event) error) error {
	c := SubscribeConfig{}
	if cfg != nil {
		c = *cfg
	}
	if c.Schema == "" {
		c.Schema = e.schema
	}
	return Subscribe(ctx, e.db, &c, handle)
}

// Count returns how many events are recorded, only those of
// processInstanceID when it is not empty; atLeast says the count stopped
// after CountRows outbox rows (see the package function Count).
func (e *Events) Count(ctx context.Context, processInstanceID string) (n int64, atLeast bool, err error) {
	return Count(ctx, e.db, e.schema, processInstanceID)
}

// Last returns the cursor of the last event written; ok is false when there
// is none.
func (e *Events) Last(ctx context.Context) (c Cursor, ok bool, err error) {
	return Last(ctx, e.db, e.schema)
}

// Now returns the cursor of "from now on" (see the package function Now).
func (e *Events) Now(ctx context.Context) (Cursor, error) { return Now(ctx, e.db) }

// Prune deletes the events written before olderThan and returns how many it
// deleted. The leader does it on its own with workflow.Config.Events
// (Pruner).
func (e *Events) Prune(ctx context.Context, olderThan time.Time) (int64, error) {
	return Prune(ctx, e.db, e.schema, olderThan, 0)
}

// PruneCount returns how many events Prune with olderThan would delete now.
func (e *Events) PruneCount(ctx context.Context, olderThan time.Time) (int64, error) {
	return PruneCount(ctx, e.db, e.schema, olderThan)
}

// Subscription returns a named subscription's saved position and how far
// behind the latest event it is. An unknown name gives an error wrapping
// ErrSubscriptionNotFound (and the HandleConfig's NotFound).
func (e *Events) Subscription(ctx context.Context, name string) (*Subscription, error) {
	sub, err := GetSubscription(ctx, e.db, e.schema, name)
	if errors.Is(err, ErrSubscriptionNotFound) && e.notFound != nil {
		return nil, fmt.Errorf("events: subscription %q: %w (%w)", name, ErrSubscriptionNotFound, e.notFound)
	}
	return sub, err
}

// Subscriptions returns every named subscription with its saved position and
// how far behind it is, by name.
func (e *Events) Subscriptions(ctx context.Context) ([]Subscription, error) {
	return Subscriptions(ctx, e.db, e.schema)
}

// Pruner returns the leader's service that deletes the events older than
// config's retention, every prune interval, logging failures to logger. The
// engine runs it on River's elected leader when workflow.Config.Events is
// set.
func (e *Events) Pruner(config Config, logger *slog.Logger) startstop.Service {
	if logger == nil {
		logger = slog.Default()
	}
	return &Pruner{events: e, config: config, logger: logger}
}

// Pruner is the leader's service deleting job status events older than the
// retention (Events.Pruner). It has a type of its own because River keys
// maintenance services by type name.
type Pruner struct {
	startstop.BaseStartStop

	events *Events
	config Config
	logger *slog.Logger
}

// Start starts the pruner's rounds until Stop (or ctx's end).
func (p *Pruner) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := p.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, func(ctx context.Context) time.Duration {
		if _, err := p.events.Prune(ctx, time.Now().Add(-p.config.retention())); err != nil && ctx.Err() == nil {
			p.logger.WarnContext(ctx, "riverbpmn: pruning job status events failed", slog.String("error", err.Error()))
		}
		return p.config.pruneInterval()
	})
	return nil
}
