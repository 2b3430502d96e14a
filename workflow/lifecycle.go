package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
			e.tel.Expired(ctx, 1, "work")
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
	service := lifecycle.NewService(engine.dbPool, engine.config.Schema, engine.config.ExpiryServiceInterval, nil)
	service.OnExpired = func(ctx context.Context, n int64) { engine.tel.Expired(ctx, n, "leader") }
	return []startstop.Service{service}
}

// checkLifecycleAtInsert refuses, when the job is inserted, lifecycle options
// (lifecycle.Opts, in the job's metadata) that leave a job no chance to run:
// an expiration time already past, or not after the time the job is
// scheduled for. The error names the field and its value. A job without
// lifecycle options costs one byte search in its metadata.
func checkLifecycleAtInsert(params *rivertype.JobInsertParams, now time.Time) error {
	o, err := lifecycle.Of(params.Metadata)
	if err != nil || o == nil || o.ExpiresAt == nil {
		// Malformed options (written into the metadata by hand) are the
		// insert trigger's to report, naming the field.
		return nil //nolint:nilerr // reported by the trigger
	}
	expiresAt := o.ExpiresAt.UTC()
	if !expiresAt.After(now) {
		return fmt.Errorf("lifecycle.Opts.ExpiresAt %s is already past (now %s): the job would expire before it could start",
			expiresAt.Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
	}
	if params.ScheduledAt != nil && !expiresAt.After(*params.ScheduledAt) {
		return fmt.Errorf("lifecycle.Opts.ExpiresAt %s is not after the job's scheduled time %s: the job would expire before it could start",
			expiresAt.Format(time.RFC3339Nano), params.ScheduledAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// lifecycleInsertError gives an error of the lifecycle insert trigger
// (migration 011) the insert's prefix (insertErrorPrefix) and, for a
// prerequisite that does not exist, an error naming it that wraps
// lifecycle.ErrJobNotFound and ErrNotFound. Any other error is returned as
// it is.
func lifecycleInsertError(manyParams []*rivertype.JobInsertParams, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !strings.HasPrefix(pgErr.Message, lifecycleTriggerPrefix) {
		return err
	}
	var missing int64
	if _, scanErr := fmt.Sscanf(pgErr.Message, lifecycleTriggerPrefix+"depends_on: job %d does not exist", &missing); scanErr != nil {
		return fmt.Errorf("%s: %w", insertErrorPrefix(manyParams, -1), err)
	}
	index := -1
	for i, params := range manyParams {
		if o, _ := lifecycle.Of(params.Metadata); o != nil && slices.Contains(o.DependsOn, missing) {
			index = i
			break
		}
	}
	return fmt.Errorf("%s: lifecycle.Opts.DependsOn names job %d, which does not exist: %w (%w; %w)",
		insertErrorPrefix(manyParams, index), missing, lifecycle.ErrJobNotFound, ErrNotFound, err)
}

// lifecycleTriggerPrefix starts the messages of the lifecycle insert
// trigger's errors.
const lifecycleTriggerPrefix = "riverbpmn: bpmn_lifecycle."

// insertErrorPrefix is how the engine's insert errors begin: "insert of
// KIND job" for a batch of one, "insert of job I of N (KIND)" for job index
// of a batch, "insert of N jobs" when which one is not known (index -1).
func insertErrorPrefix(manyParams []*rivertype.JobInsertParams, index int) string {
	switch {
	case len(manyParams) == 1:
		return fmt.Sprintf("insert of %s job", manyParams[0].Kind)
	case index >= 0:
		return fmt.Sprintf("insert of job %d of %d (%s)", index+1, len(manyParams), manyParams[index].Kind)
	default:
		return fmt.Sprintf("insert of %d jobs", len(manyParams))
	}
}
