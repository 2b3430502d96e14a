package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/overview"
)

// QueueReportInterval is how often a River client working a queue reports
// it in River's river_queue table (River's producer does it when it starts
// and every 10 minutes).
const QueueReportInterval = 10 * time.Minute

// QueueWorkedWithin is how recent a queue's report must be for a client to
// be taken as working it: two report intervals and a minute.
const QueueWorkedWithin = 2*QueueReportInterval + time.Minute

// QueueState is what River's record of a queue says about who works it.
type QueueState struct {
	Name string
	// Recorded is false when River has no record of the queue (no client
	// has worked it, or none for River's queue retention); ReportedAt is
	// its last report by a client.
	Recorded   bool
	ReportedAt time.Time
	// Worked is true when a client reported working the queue within
	// QueueWorkedWithin (by the database's clock).
	Worked bool
	// Paused is true when the queue is paused (River's QueuePause).
	Paused bool
}

var queueStateSQL = mustReadSQL("queue_state.sql")

// QueueState reads River's record of queue: whether a client reported
// working it recently, and whether it is paused.
func (e *Engine) QueueState(ctx context.Context, queue string) (*QueueState, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	var (
		updated, now time.Time
		paused       *time.Time
	)
	err := e.dbPool.QueryRow(ctx, e.sql(queueStateSQL), queue).Scan(&updated, &paused, &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return &QueueState{Name: queue}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: reading queue %q: %w", queue, err)
	}
	updated = updated.UTC()
	return &QueueState{Name: queue, Recorded: true, ReportedAt: updated, Worked: now.Sub(updated) <= QueueWorkedWithin, Paused: paused != nil}, nil
}

// Queues lists River's queues and the queues with unfinished jobs River has
// no record of (package overview), with their unfinished jobs and whether a
// client works each (a report within QueueWorkedWithin).
func (e *Engine) Queues(ctx context.Context) ([]*overview.Queue, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	return overview.Queues(ctx, e.dbPool, e.config.Schema, QueueWorkedWithin)
}

// PauseQueue pauses queue with River's Client.QueuePause: River's clients
// stop fetching from it (those listening at once, the others at their next
// poll of the queue's settings). ResumeQueue undoes it.
func (e *Engine) PauseQueue(ctx context.Context, queue string) error {
	return e.queueControl(ctx, queue, true)
}

// ResumeQueue resumes a paused queue with River's Client.QueueResume.
func (e *Engine) ResumeQueue(ctx context.Context, queue string) error {
	return e.queueControl(ctx, queue, false)
}

func (e *Engine) queueControl(ctx context.Context, queue string, pause bool) error {
	if queue == "" {
		return errors.New("workflow: queue is empty")
	}
	// An insert-only client of the engine: River's own pause, with its
	// notification to the clients working the queue.
	client, err := NewClient(e, &river.Config{Schema: e.config.Schema})
	if err != nil {
		return err
	}
	if pause {
		err = client.QueuePause(ctx, queue, nil)
	} else {
		err = client.QueueResume(ctx, queue, nil)
	}
	if err != nil {
		return fmt.Errorf("workflow: queue %q: %w", queue, err)
	}
	return nil
}
