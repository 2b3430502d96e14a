package liveness

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

var sessionsListSQL = sqltemplate.MustRead(sqlFS, "sql/sessions_list.sql")

// MaxSessions caps how many sessions Sessions returns.
const MaxSessions = 10_000

// Session is one liveness session of a client, as the database sees it.
type Session struct {
	ID       int64     `json:"id"`
	ClientID string    `json:"client_id"`
	PID      int32     `json:"pid"`
	Started  time.Time `json:"started_at"`
	// Superseded is when the same client opened its next session.
	Superseded *time.Time `json:"superseded_at,omitempty"`
	// DeadSince is when a client first saw the session dead; its jobs are
	// given back TakeoverAfter later.
	DeadSince *time.Time `json:"dead_since,omitempty"`
	// Alive is whether the session's backend holds its lock now.
	Alive bool `json:"alive"`
}

// Querier runs a query; pgxpool.Pool, pgx.Conn and pgx.Tx have it.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Sessions lists the sessions of schema, oldest first (at most MaxSessions).
func Sessions(ctx context.Context, q Querier, schema string) ([]*Session, error) {
	rows, err := q.Query(ctx, sqltemplate.Render(sessionsListSQL, schema), MaxSessions)
	if err != nil {
		return nil, fmt.Errorf("liveness: listing sessions: %w", err)
	}
	sessions, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Session, error) {
		var s Session
		if err := row.Scan(&s.ID, &s.ClientID, &s.PID, &s.Started, &s.Superseded, &s.DeadSince, &s.Alive); err != nil {
			return nil, err
		}
		s.Started = s.Started.UTC()
		if s.Superseded != nil {
			u := s.Superseded.UTC()
			s.Superseded = &u
		}
		if s.DeadSince != nil {
			u := s.DeadSince.UTC()
			s.DeadSince = &u
		}
		return &s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("liveness: listing sessions: %w", err)
	}
	return sessions, nil
}

// JobsOfDeadSessions returns which of the running jobs ids were fetched by
// a session that is dead: the leader's takeover gives them back without
// using an attempt. River's rescuer skips them (workflow's pilot filters
// what the rescuer finds stuck), whatever its RescueStuckJobsAfter.
func JobsOfDeadSessions(ctx context.Context, q Querier, schema string, ids []int64) (map[int64]bool, error) {
	dead := map[int64]bool{}
	if len(ids) == 0 {
		return dead, nil
	}
	rows, err := q.Query(ctx, sqltemplate.Render(jobsOfDeadSQL, schema), ids)
	if err != nil {
		return nil, fmt.Errorf("liveness: looking for jobs of dead sessions: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("liveness: looking for jobs of dead sessions: %w", err)
	}
	for _, id := range found {
		dead[id] = true
	}
	return dead, nil
}
