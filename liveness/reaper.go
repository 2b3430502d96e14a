package liveness

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverqueue/river/rivershared/startstop"
)

// observation is what one run of the observe statement returns.
type observation struct {
	dead, resigned, ended int64
	selfAlive             bool
	backend               int32
}

// observe runs the observe statement (see sql/session_observe.sql) for
// session self (0: none).
func observe(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, schema string, self int64, stallAfter time.Duration, obs *observation,
) error {
	return q.QueryRow(ctx, sqltemplate.Render(sessionObserveSQL, schema), schema, self, stallAfter).
		Scan(&obs.dead, &obs.resigned, &obs.ended, &obs.selfAlive, &obs.backend)
}

// DB is what the Reaper needs from the database: a pgxpool.Pool has it.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Takeover is one dead session given back.
type Takeover struct {
	Session  int64
	ClientID string
	// DeadSince is when the session was first seen dead (database clock).
	DeadSince time.Time
	// JobIDs are the running jobs given back.
	JobIDs []int64
	// FreedKeys counts the exclusive keys freed.
	FreedKeys int
}

// Reaper is the leader's takeover service: every CheckInterval it records
// dead sessions and gives back the jobs of those seen dead at least
// TakeoverAfter ago. It is a startstop.Service of its own named type, so
// River's queue maintainer (which keys its services by type name) keeps it
// apart from other plugin services.
type Reaper struct {
	startstop.BaseStartStop

	cfg    Config
	db     DB
	schema func() (string, bool)
	logger *slog.Logger
	// OnTakeover, when set, is called after each takeover commits (tests,
	// metrics).
	OnTakeover func(Takeover)
}

// NewReaper returns the takeover service. schema says which schema the
// client works in, and false while it does not know yet (it skips its
// rounds until then).
func NewReaper(cfg Config, db DB, schema func() (string, bool), logger *slog.Logger) *Reaper {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Reaper{cfg: cfg.WithDefaults(), db: db, schema: schema, logger: logger}
}

// Start runs the service until ctx is done or Stop is called.
func (r *Reaper) Start(ctx context.Context) error {
	ctx, shouldStart, started, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		started()
		defer stopped()
		ticker := time.NewTicker(r.cfg.CheckInterval)
		defer ticker.Stop()
		for {
			if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
				r.logger.WarnContext(ctx, "riverbpmn liveness: taking over dead clients failed; retrying", slog.String("err", err.Error()))
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return nil
}

// RunOnce records dead sessions and takes over those that are due. It
// returns what it took over.
func (r *Reaper) RunOnce(ctx context.Context) ([]Takeover, error) {
	schema, ok := r.schema()
	if !ok {
		return nil, nil
	}
	return takeOver(ctx, r.db, schema, r.cfg.TakeoverAfter, r.cfg.StallAfter, r.logger, r.OnTakeover)
}

// TakeOver records dead sessions of schema and takes over those seen dead at
// least after ago, in one transaction. It is what the Reaper does every
// CheckInterval; onTakeover (may be nil) is called for each after the commit.
// A nil logger logs nothing. Sessions idle for DefaultStallAfter count as
// dead.
func TakeOver(ctx context.Context, db DB, schema string, after time.Duration, logger *slog.Logger, onTakeover func(Takeover)) ([]Takeover, error) {
	return takeOver(ctx, db, schema, after, DefaultStallAfter, logger, onTakeover)
}

func takeOver(ctx context.Context, db DB, schema string, after, stallAfter time.Duration, logger *slog.Logger, onTakeover func(Takeover)) ([]Takeover, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var obs observation
	if err := observe(ctx, db, schema, 0, stallAfter, &obs); err != nil {
		return nil, fmt.Errorf("liveness: looking for dead sessions: %w", err)
	}
	if obs.ended > 0 {
		logger.WarnContext(ctx, "riverbpmn liveness: ended the connections of stalled clients (no ping within StallAfter); their jobs are given back after TakeoverAfter",
			slog.Int64("sessions", obs.ended), slog.Duration("stall_after", stallAfter))
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("liveness: taking over dead sessions: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, sqltemplate.Render(sessionsDueSQL, schema), after)
	if err != nil {
		return nil, fmt.Errorf("liveness: listing dead sessions: %w", err)
	}
	type due struct {
		id         int64
		clientID   string
		started    time.Time
		superseded *time.Time
		deadSince  time.Time
	}
	sessions, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (due, error) {
		var d due
		err := row.Scan(&d.id, &d.clientID, &d.started, &d.superseded, &d.deadSince)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("liveness: listing dead sessions: %w", err)
	}
	if len(sessions) == 0 {
		return nil, nil
	}
	takeovers := make([]Takeover, 0, len(sessions))
	for _, s := range sessions {
		msg := fmt.Sprintf("riverbpmn liveness: client %s (session %d) lost its liveness at %s while running this attempt; the run was given back without using an execution",
			s.clientID, s.id, s.deadSince.UTC().Format(time.RFC3339Nano))
		rows, err := tx.Query(ctx, sqltemplate.Render(sessionTakeoverSQL, schema), s.id, s.clientID, s.started, s.superseded, msg, schema)
		if err != nil {
			return nil, fmt.Errorf("liveness: taking over session %d of client %s: %w", s.id, s.clientID, err)
		}
		t := Takeover{Session: s.id, ClientID: s.clientID, DeadSince: s.deadSince.UTC()}
		for rows.Next() {
			var (
				id           int64
				freed, woken int64
			)
			if err := rows.Scan(&id, &freed, &woken); err != nil {
				rows.Close()
				return nil, fmt.Errorf("liveness: taking over session %d of client %s: %w", s.id, s.clientID, err)
			}
			t.JobIDs = append(t.JobIDs, id)
			t.FreedKeys = int(freed)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("liveness: taking over session %d of client %s: %w", s.id, s.clientID, err)
		}
		takeovers = append(takeovers, t)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("liveness: taking over dead sessions: %w", err)
	}
	for _, t := range takeovers {
		logger.WarnContext(ctx, "riverbpmn liveness: gave back the running jobs of a dead client",
			slog.String("client_id", t.ClientID), slog.Int64("session", t.Session),
			slog.Int("jobs", len(t.JobIDs)), slog.Int("freed_keys", t.FreedKeys))
		if onTakeover != nil {
			onTakeover(t)
		}
	}
	return takeovers, nil
}
