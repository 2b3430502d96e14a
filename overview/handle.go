package overview

import (
	"context"
	"errors"
	"time"
)

// HandleConfig configures an Overviews handle. What needs the engine (the
// exclusive scope in force) comes in as a func.
type HandleConfig struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// RootScope reports whether the exclusive scope in force in the schema
	// keys a job by its root process instance (exclusive.RootProcessInstance):
	// the overview then counts a job as waiting on its root's key. Required.
	RootScope func(ctx context.Context) (bool, error)
	// WorkedWithin is how recent a queue's report must be for a client to
	// be taken as working it (workflow.QueueWorkedWithin).
	WorkedWithin time.Duration
	// Now, if set, is the time the charts end at (tests); nil means
	// time.Now.
	Now func() time.Time
}

// Overviews is the handle on a schema's overview
// (workflow.Engine.Overviews): what the console's overview page and
// `riverbpmn overview` show, read by Read.
type Overviews struct {
	config HandleConfig
}

// New returns an Overviews handle.
func New(config HandleConfig) *Overviews {
	if config.Now == nil {
		config.Now = time.Now
	}
	return &Overviews{config: config}
}

// Read reads the schema's overview: the unfinished jobs per process
// definition and job definition by state, held by reason and waiting on an
// exclusive key, open incidents, River's queues and whether a client works
// them, and jobs completed and failed and incidents opened per step over
// the window up to now (the first bucket starts at now minus window,
// truncated to step). A step that is not positive is an error.
func (o *Overviews) Read(ctx context.Context, window, step time.Duration) (*Overview, error) {
	if o.config.RootScope == nil {
		return nil, errors.New("overview: this handle cannot read the exclusive scope (HandleConfig.RootScope is not set)")
	}
	rootScope, err := o.config.RootScope(ctx)
	if err != nil {
		return nil, err
	}
	since := o.config.Now().UTC().Add(-window).Truncate(step)
	return Read(ctx, o.config.DB, o.config.Schema, &Options{
		Since: since, Step: step, RootScope: rootScope, WorkedWithin: o.config.WorkedWithin,
	})
}
