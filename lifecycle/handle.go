package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
)

// Config is the lifecycle's settings in an engine
// (workflow.Config.Lifecycle).
type Config struct {
	// ExpiryServiceInterval is the longest the elected leader waits between
	// two looks for expired jobs (0 means DefaultServiceInterval, 1 s): a
	// waiting job is discarded at most this long after it expired.
	ExpiryServiceInterval time.Duration
}

// HandleDB is what a Lifecycle handle needs of a database; *pgxpool.Pool
// has it.
type HandleDB interface {
	hold.DB
	Begin(ctx context.Context) (pgx.Tx, error)
}

// HandleConfig configures a Lifecycle handle.
type HandleConfig struct {
	// DB is the database.
	DB HandleDB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// CheckInstance, if set, checks a process instance id before anything
	// is read (the engine checks it is a valid identifier).
	CheckInstance func(id string) error
	// NotFound, if set, is wrapped beside ErrJobNotFound and
	// ErrInstanceNotFound by the errors for unknown jobs and instances (the
	// engine passes its ErrNotFound); nil means ErrNotFound.
	NotFound error
	// OnExpired, if set, is told how many jobs the leader's Service
	// discarded in a round because they expired (the engine's telemetry).
	OnExpired func(ctx context.Context, n int64)
}

// Lifecycle is the handle on the pending jobs and prerequisites of a schema
// (workflow.Engine.Lifecycle): queue pending jobs, of a process instance
// too, and see how far a job's prerequisites are.
type Lifecycle struct {
	config HandleConfig
}

// ErrNotFound is wrapped by the handle's errors for an id or a name that
// names nothing: the one not-found error of every riverbpmn package
// (workflow.ErrNotFound, job.ErrNotFound, ... are this same value).
var ErrNotFound = notfound.Err

// New returns a Lifecycle handle.
func New(config HandleConfig) *Lifecycle {
	if config.NotFound == nil {
		config.NotFound = ErrNotFound
	}
	return &Lifecycle{config: config}
}

// Queue queues pending jobs: a job inserted with Opts.Pending loses its
// Pending hold and runs once nothing else holds it; a job River's
// InsertOpts.Pending left pending becomes available. A job that is not
// pending is left alone (NotPending). All in one transaction: an unknown id
// queues nothing and returns an error wrapping ErrJobNotFound (and the
// handle's NotFound) that names it.
func (l *Lifecycle) Queue(ctx context.Context, jobIDs ...int64) ([]QueueResult, error) {
	var results []QueueResult
	err := pgx.BeginFunc(ctx, l.config.DB, func(tx pgx.Tx) error {
		var err error
		results, err = Queue(ctx, tx, l.config.Schema, jobIDs)
		return err
	})
	return results, l.error(err)
}

// QueueProcessInstance queues every pending job of a process instance (see
// Queue). An instance no job belongs to is ErrInstanceNotFound.
func (l *Lifecycle) QueueProcessInstance(ctx context.Context, processInstanceID string) ([]QueueResult, error) {
	if l.config.CheckInstance != nil {
		if err := l.config.CheckInstance(processInstanceID); err != nil {
			return nil, err
		}
	}
	var results []QueueResult
	err := pgx.BeginFunc(ctx, l.config.DB, func(tx pgx.Tx) error {
		var err error
		results, err = QueueProcessInstance(ctx, tx, l.config.Schema, processInstanceID)
		return err
	})
	return results, l.error(err)
}

// Dependencies returns how far job jobID's prerequisites are (done out of
// total, blocked ones) and how many jobs wait for it. An unknown job is
// ErrJobNotFound.
func (l *Lifecycle) Dependencies(ctx context.Context, jobID int64) (*Progress, error) {
	p, err := Dependencies(ctx, l.config.DB, l.config.Schema, jobID)
	return p, l.error(err)
}

// error makes the not-found errors wrap the handle's NotFound too.
func (l *Lifecycle) error(err error) error {
	if err != nil && l.config.NotFound != nil && (errors.Is(err, ErrJobNotFound) || errors.Is(err, ErrInstanceNotFound)) {
		return fmt.Errorf("%w (%w)", err, l.config.NotFound)
	}
	return err
}

// Service returns the leader's service that discards expired jobs and links
// late dependencies (see Service), every config.ExpiryServiceInterval at
// most, logging to logger.
func (l *Lifecycle) Service(config Config, logger *slog.Logger) *Service {
	s := NewService(l.config.DB, l.config.Schema, config.ExpiryServiceInterval, logger)
	s.OnExpired = l.config.OnExpired
	return s
}
