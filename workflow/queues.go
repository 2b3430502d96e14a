package workflow

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/overview"
	"github.com/riverbpmn/riverbpmn/queue"
)

// QueueReportInterval is how often a River client working a queue reports
// it in River's river_queue table (queue.ReportInterval).
const QueueReportInterval = queue.ReportInterval

// QueueWorkedWithin is how recent a queue's report must be for a client to
// be taken as working it (queue.WorkedWithin).
const QueueWorkedWithin = queue.WorkedWithin

// QueueState is what River's record of a queue says about who works it.
type QueueState = queue.State

// Queues returns the handle on the schema's queues (package queue): List
// pages through River's queues and the queues with unfinished jobs River
// has no record of, Get reads River's record of one, and Pause and Resume
// pause and resume one with River's own QueuePause and QueueResume.
func (e *Engine) Queues() *queue.Queues { return e.queues.get(e.newQueues) }

// newQueues makes the engine's queues handle.
func (e *Engine) newQueues() *queue.Queues {
	return queue.New(queue.Config{DB: e.db(), Schema: e.config.Schema, Control: e.queueControl})
}

// QueueState reads River's record of queue: whether a client reported
// working it recently, and whether it is paused.
//
// Deprecated: use [Engine.Queues] and [queue.Queues.Get].
func (e *Engine) QueueState(ctx context.Context, queue string) (*QueueState, error) {
	return e.Queues().Get(ctx, queue)
}

// QueueList lists River's queues and the queues with unfinished jobs River
// has no record of, with their unfinished jobs and whether a client works
// each. It is what Engine.Queues(ctx) was before Queues became the queues
// handle.
//
// Deprecated: use [Engine.Queues] and [queue.Queues.List].
func (e *Engine) QueueList(ctx context.Context) ([]*overview.Queue, error) {
	return allPages(listpage.MaxLimit*10, func(after string) ([]*overview.Queue, string, error) {
		res, err := e.Queues().List(ctx, &queue.ListParams{Limit: listpage.MaxLimit, After: after})
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	})
}

// PauseQueue pauses queue with River's Client.QueuePause.
//
// Deprecated: use [Engine.Queues] and [queue.Queues.Pause].
func (e *Engine) PauseQueue(ctx context.Context, queue string) error {
	return e.Queues().Pause(ctx, queue)
}

// ResumeQueue resumes a paused queue with River's Client.QueueResume.
//
// Deprecated: use [Engine.Queues] and [queue.Queues.Resume].
func (e *Engine) ResumeQueue(ctx context.Context, queue string) error {
	return e.Queues().Resume(ctx, queue)
}

// queueControl pauses or resumes queue on an insert-only client of the
// engine: River's own pause, with its notification to the clients working
// the queue.
func (e *Engine) queueControl(ctx context.Context, queue string, pause bool) error {
	client, err := NewClient(e, &river.Config{Schema: e.config.Schema})
	if err != nil {
		return err
	}
	if pause {
		return client.QueuePause(ctx, queue, nil)
	}
	return client.QueueResume(ctx, queue, nil)
}
