package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// QueueJobs queues pending jobs (package lifecycle): a job inserted with
// lifecycle.Opts.Pending loses its Pending hold and runs once nothing else
// holds it; a job River's InsertOpts.Pending left pending becomes available.
// A job that is not pending is left alone (lifecycle.NotPending). All in one
// transaction: an unknown id queues nothing and returns an error wrapping
// ErrNotFound that names it.
func (e *Engine) QueueJobs(ctx context.Context, jobIDs ...int64) ([]lifecycle.QueueResult, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	var results []lifecycle.QueueResult
	err := pgx.BeginFunc(ctx, e.dbPool, func(tx pgx.Tx) error {
		var err error
		results, err = lifecycle.Queue(ctx, tx, e.config.Schema, jobIDs)
		return err
	})
	return results, lifecycleError(err)
}

// QueueProcessInstance queues every pending job of a process instance (see
// QueueJobs). An instance no job belongs to is ErrNotFound.
func (e *Engine) QueueProcessInstance(ctx context.Context, processInstanceID string) ([]lifecycle.QueueResult, error) {
	if problem := identifierProblem(processInstanceID, true); problem != "" {
		return nil, &JobContextError{Field: "process_instance_id", Value: processInstanceID, Problem: problem}
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	var results []lifecycle.QueueResult
	err := pgx.BeginFunc(ctx, e.dbPool, func(tx pgx.Tx) error {
		var err error
		results, err = lifecycle.QueueProcessInstance(ctx, tx, e.config.Schema, processInstanceID)
		return err
	})
	return results, lifecycleError(err)
}

// JobDependencies returns how far job jobID's prerequisites are (done out
// of total, blocked ones) and how many jobs wait for it. An unknown job is
// ErrNotFound.
func (e *Engine) JobDependencies(ctx context.Context, jobID int64) (*lifecycle.Progress, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	p, err := lifecycle.Dependencies(ctx, e.dbPool, e.config.Schema, jobID)
	return p, lifecycleError(err)
}

// lifecycleError makes package lifecycle's not-found errors wrap
// ErrNotFound too.
func lifecycleError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, lifecycle.ErrJobNotFound) || errors.Is(err, lifecycle.ErrInstanceNotFound) {
		return fmt.Errorf("workflow: %w (%w)", err, ErrNotFound)
	}
	return fmt.Errorf("workflow: %w", err)
}

// workUnlessExpired refuses to run a job whose expiration time
// (lifecycle.Opts.ExpiresAt) passed before this execution began: it ends the
// job as discarded with lifecycle.ExpiryMessage, before any user code runs.
// A job without an expiration time costs one byte search in its metadata.
func (e *Engine) workUnlessExpired(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	expiresAt, ok := lifecycle.ExpiresAt(job.Metadata)
	if !ok || time.Now().Before(expiresAt) {
		return doInner(ctx)
	}
	if e.dbPool != nil {
		schema := e.config.Schema
		if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
			schema = client.Schema()
		}
		if _, err := lifecycle.EndExpired(context.WithoutCancel(ctx), e.dbPool, schema, job.ID, expiresAt); err == nil {
			return nil // discarded already: River's completer leaves it alone
		}
	}
	// No pool, or the update failed: still never run it.
	return river.JobCancel(errors.New(lifecycle.ExpiryMessage(expiresAt)))
}

// lifecycleServices returns the expiry service, for River's elected leader
// (PluginMaintenanceServices).
func (p *pilot) lifecycleServices() []startstop.Service {
	engine := p.driver.engine
	if engine == nil || engine.dbPool == nil {
		return nil
	}
	return []startstop.Service{lifecycle.NewService(engine.dbPool, engine.config.Schema, engine.config.ExpiryServiceInterval, nil)}
}
