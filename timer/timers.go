package timer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river/rivershared/startstop"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/roundloop"
)

// DefaultRetention is how long an ended timer is kept unless
// Config.Retention says otherwise: River's default retention of completed
// jobs, so a timer goes about when its last occurrence does.
const DefaultRetention = 24 * time.Hour

// PruneInterval is how often the leader prunes ended timers (Pruner).
const PruneInterval = time.Hour

// Config is the timers' settings in an engine (workflow.Config.Timers).
type Config struct {
	// Retention is how long the row of an ended timer (fired for the last
	// time, or cancelled) is kept after it ended, once its occurrence jobs
	// have all finished; the elected leader then deletes it (Pruner). 0
	// means DefaultRetention; a negative value keeps ended timers forever,
	// as a negative retention does in River's job cleaner.
	Retention time.Duration
}

// HandleDB is what a Timers handle needs of a database; *pgxpool.Pool has it.
type HandleDB interface {
	Executor
	DB
}

// HandleConfig configures a Timers handle.
type HandleConfig struct {
	// DB is the database.
	DB HandleDB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// NotFound, if set, is wrapped with ErrNotFound by the errors for an
	// unknown timer id (the engine passes its ErrNotFound).
	NotFound error
}

// Timers is the handle on a schema's timers (workflow.Engine.Timers):
// list them, read one, move a due date, cancel one, prune ended ones.
// Timers are inserted with handlers.Timers.InsertTx.
type Timers struct {
	store    *Store
	db       HandleDB
	notFound error
}

// New returns a Timers handle.
func New(config HandleConfig) *Timers {
	return &Timers{store: &Store{Schema: config.Schema}, db: config.DB, notFound: config.NotFound}
}

// ListParams selects a page of timers for List. The zero value lists the
// timers that have not ended, of every process instance and the timer start
// events.
type ListParams struct {
	Filter
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is where the page starts: "" for the first page, else the Next
	// of the previous page.
	After string
}

// ListResult is a page of timers, by id.
type ListResult struct {
	// Items are the page's timers, by id, each with the due date of the
	// occurrence waiting to fire and the repetitions left.
	Items []*Info `json:"items"`
	// Next is the After of the next page; "" when there is none.
	Next string `json:"next,omitempty"`
}

// List returns a page of the timers params selects, by id: keyset paging,
// so a page costs the same however many timers there are. Next is empty
// exactly when no further timer is selected.
func (t *Timers) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("timer", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("timer", params.After)
	if err != nil {
		return nil, err
	}
	infos, err := t.store.ListAllPage(ctx, t.db, &params.Filter, after, listpage.Fetch(limit))
	if err != nil {
		return nil, fmt.Errorf("timer: listing timers: %w", err)
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(infos, limit, func(i *Info) string { return listpage.ID(i.ID) })
	return res, nil
}

// Get returns one timer. An unknown id gives an error wrapping ErrNotFound.
func (t *Timers) Get(ctx context.Context, id int64) (*Info, error) {
	info, err := t.store.Get(ctx, t.db, id)
	if err != nil {
		return nil, t.error("reading", id, err)
	}
	return info, nil
}

// SetDueDate moves the due date of the timer's occurrence waiting to fire
// (Camunda's setJobDuedate). With cascade, an ISO-8601 cycle keeps the move
// as its repeat offset: every later occurrence is shifted by the same amount
// (R2/PT30M moved +15m fires at +45m, then +75m). Cron cycles, date and
// duration timers are never shifted. It returns the offset added. An unknown
// id wraps ErrNotFound; a timer with no waiting occurrence wraps
// ErrNotWaiting.
func (t *Timers) SetDueDate(ctx context.Context, id int64, due time.Time, cascade bool) (time.Duration, error) {
	shift, err := t.store.SetDueDate(ctx, t.db, id, due, cascade)
	if err != nil {
		return 0, t.error("setting the due date of", id, err)
	}
	return shift, nil
}

// Cancel ends a timer and its cycle: its occurrences that have not started
// (the waiting one, and earlier ones waiting to be retried) are cancelled,
// and no further occurrence is created. A running occurrence finishes. It
// returns the cancelled jobs' ids. An unknown id wraps ErrNotFound.
func (t *Timers) Cancel(ctx context.Context, id int64) ([]int64, error) {
	ids, err := t.store.Cancel(ctx, t.db, id)
	if err != nil {
		return nil, t.error("cancelling", id, err)
	}
	return ids, nil
}

// Prune deletes the timers that ended before endedBefore and whose
// occurrence jobs have all finished, and returns how many it deleted. The
// elected leader does it every PruneInterval (Pruner).
func (t *Timers) Prune(ctx context.Context, endedBefore time.Time) (int64, error) {
	n, err := t.store.Prune(ctx, t.db, endedBefore)
	if err != nil {
		return n, fmt.Errorf("timer: %w", err)
	}
	return n, nil
}

// error wraps ErrNotFound (and the handle's NotFound) for an unknown timer.
func (t *Timers) error(what string, id int64, err error) error {
	if errors.Is(err, ErrNotFound) && t.notFound != nil {
		return fmt.Errorf("timer: %s timer %d: %w (%w)", what, id, ErrNotFound, t.notFound)
	}
	return fmt.Errorf("timer: %s timer %d: %w", what, id, err)
}

// Pruner returns the leader's service that deletes ended timers after
// config.Retention, every PruneInterval, logging failures to logger; nil
// when config keeps ended timers forever (a negative Retention).
func (t *Timers) Pruner(config Config, logger *slog.Logger) startstop.Service {
	if config.Retention < 0 {
		return nil
	}
	if config.Retention == 0 {
		config.Retention = DefaultRetention
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Pruner{timers: t, retention: config.Retention, logger: logger}
}

// Pruner is the leader's service deleting ended timers (Timers.Pruner). It
// has a type of its own: River keys maintenance services by type name.
type Pruner struct {
	startstop.BaseStartStop

	timers    *Timers
	retention time.Duration
	logger    *slog.Logger
}

// Start starts the pruner's rounds until Stop (or ctx's end).
func (p *Pruner) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := p.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	roundloop.Go(ctx, started, stopped, func(ctx context.Context) time.Duration {
		if _, err := p.timers.Prune(ctx, time.Now().Add(-p.retention)); err != nil && ctx.Err() == nil {
			p.logger.WarnContext(ctx, "riverbpmn: pruning ended timers failed", slog.String("error", err.Error()))
		}
		return PruneInterval
	})
	return nil
}
