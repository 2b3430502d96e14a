package main

// queues pause|resume: River's pause and resume of a queue (queues list is
// in lists.go).

import (
	"context"
	"fmt"
	"io"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// runQueuePause pauses a queue (River's QueuePause).
func runQueuePause(ctx context.Context, args []string, stdout io.Writer) error {
	return runQueueChange(ctx, "queues pause", "paused", args, stdout, func(e *workflow.Engine, ctx context.Context, q string) error {
		return e.Queues().Pause(ctx, q)
	})
}

// runQueueResume resumes a paused queue (River's QueueResume).
func runQueueResume(ctx context.Context, args []string, stdout io.Writer) error {
	return runQueueChange(ctx, "queues resume", "resumed", args, stdout, func(e *workflow.Engine, ctx context.Context, q string) error {
		return e.Queues().Resume(ctx, q)
	})
}

// runQueueChange runs change on the queue QUEUE and says what it did.
func runQueueChange(ctx context.Context, name, done string, args []string, stdout io.Writer, change func(*workflow.Engine, context.Context, string) error) error {
	v := newVerb(name)
	positionals, err := v.parse(args, "QUEUE")
	if err != nil {
		return err
	}
	queue := positionals[0]
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := change(engine, ctx, queue); err != nil {
		return err
	}
	msg := fmt.Sprintf("queue %q %s", queue, done)
	return v.println(stdout, doneJSON{Done: msg, Detail: map[string]string{"queue": queue}}, msg)
}
