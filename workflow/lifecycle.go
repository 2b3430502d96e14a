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

// Lifecycle returns the handle on the pending jobs and prerequisites of the
// engine's schema (package lifecycle): Queue and QueueProcessInstance queue
// pending jobs, Dependencies shows how far a job's prerequisites are.
// Unknown jobs and instances give errors wrapping ErrNotFound. On an engine
// without a pool every call fails.
func (e *Engine) Lifecycle() *lifecycle.Lifecycle {
	return e.lifecycle.get(func() *lifecycle.Lifecycle {
		return lifecycle.New(lifecycle.HandleConfig{
			DB:     e.db(),
			Schema: e.config.Schema,
			CheckInstance: func(id string) error {
				if problem := identifierProblem(id, true); problem != "" {
					return &JobContextError{Field: "process_instance_id", Value: id, Problem: problem}
				}
				return nil
			},
			NotFound:  ErrNotFound,
			OnExpired: func(ctx context.Context, n int64) { e.tel.Expired(ctx, n, "leader") },
		})
	})
}

// lifecycleConfig is Config.Lifecycle, with the deprecated
// Config.ExpiryServiceInterval when Lifecycle.ExpiryServiceInterval is zero.
func (c *Config) lifecycleConfig() lifecycle.Config {
	l := c.Lifecycle
	if l.ExpiryServiceInterval == 0 {
		l.ExpiryServiceInterval = c.ExpiryServiceInterval
	}
	return l
}

// validateLifecycle refuses Config.Lifecycle.ExpiryServiceInterval and the
// deprecated Config.ExpiryServiceInterval set to different values.
func validateLifecycle(c *Config) error {
	if c.Lifecycle.ExpiryServiceInterval != 0 && c.ExpiryServiceInterval != 0 && c.Lifecycle.ExpiryServiceInterval != c.ExpiryServiceInterval {
		return fmt.Errorf("workflow: Config.Lifecycle.ExpiryServiceInterval (%s) and the deprecated Config.ExpiryServiceInterval (%s) differ: set only Config.Lifecycle.ExpiryServiceInterval",
			c.Lifecycle.ExpiryServiceInterval, c.ExpiryServiceInterval)
	}
	return nil
}

// QueueJobs queues pending jobs.
//
// Deprecated: use [Engine.Lifecycle] and [lifecycle.Lifecycle.Queue].
func (e *Engine) QueueJobs(ctx context.Context, jobIDs ...int64) ([]lifecycle.QueueResult, error) {
	return e.Lifecycle().Queue(ctx, jobIDs...)
}

// QueueProcessInstance queues every pending job of a process instance.
//
// Deprecated: use [Engine.Lifecycle] and [lifecycle.Lifecycle.QueueProcessInstance].
func (e *Engine) QueueProcessInstance(ctx context.Context, processInstanceID string) ([]lifecycle.QueueResult, error) {
	return e.Lifecycle().QueueProcessInstance(ctx, processInstanceID)
}

// JobDependencies returns how far job jobID's prerequisites are.
//
// Deprecated: use [Engine.Lifecycle] and [lifecycle.Lifecycle.Dependencies].
func (e *Engine) JobDependencies(ctx context.Context, jobID int64) (*lifecycle.Progress, error) {
	return e.Lifecycle().Dependencies(ctx, jobID)
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
	return []startstop.Service{engine.Lifecycle().Service(engine.config.lifecycleConfig(), nil)}
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
