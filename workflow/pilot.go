package workflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/puddle/v2"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// pilot is riverbpmn's per-client River pilot. Everything but fetching is
// River's StandardPilot.
type pilot struct {
	riverStandardPilot

	driver *Driver

	// insert is the client's insert path, middleware included (from
	// PilotInit); checkWiring sends a probe through it.
	insert func(ctx context.Context, tx riverdriver.ExecutorTx, params []*rivertype.JobInsertParams) ([]*rivertype.JobInsertResult, error)

	// logger is the client's archetype logger, made the pilot's own by
	// markArchetype (retry_wiring.go).
	logger *slog.Logger

	// middlewareSeen is true when the engine's middleware was handed this
	// client's archetype (middleware_wiring.go): no wiring probe is needed.
	middlewareSeen bool

	// statement caches the fetch statement rendered for the client's
	// acquisition and schema; neither changes, so it is rendered once.
	statement atomic.Pointer[schemaStatement]
}

func newPilot(driver *Driver) *pilot { return &pilot{driver: driver} }

// exclusiveEnabled reports whether this pilot's engine enforces exclusivity.
// With Config.ExclusiveScope enforcing (the default), every client of the
// engine fetches with its own fetch plan plus the exclusive step (fetch.go,
// run by exclusive.Keeper.Fetch), the work middleware gives keys back
// (exclusive.Keeper.Work), and River's producer hooks (below) tell the
// keeper what it cannot see from the middleware. The invariant and the race
// analysis are in package exclusive's documentation.
func (p *pilot) exclusiveEnabled() bool {
	return p.driver.engine != nil && p.driver.engine.config.ExclusiveScope.Enabled()
}

// PilotInit is called by River when the client is built.
func (p *pilot) PilotInit(archetype *riverArchetype, params *riverPilotInitParams) {
	p.riverStandardPilot.PilotInit(archetype, params)
	p.insert = params.Insert
	if p.driver.engine == nil {
		return
	}
	// The engine logs through the client's own logger, not the copy that
	// marks the archetype for the retry policy check.
	if archetype.Logger != nil {
		p.driver.engine.clientLogger.Store(archetype.Logger)
	}
	p.middlewareSeen = p.driver.engine.middlewareBases.claim(archetype.Logger)
	p.markArchetype(archetype)
}

// querier is the part of pgx that runs a multi-row query; River's executor
// interface has no such method.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// querier returns the pgx connection behind exec: the transaction for a
// transactional executor, the driver's pool otherwise.
func (d *Driver) querier(exec riverdriver.Executor) (querier, error) {
	if execTx, ok := exec.(riverdriver.ExecutorTx); ok {
		return d.UnwrapTx(execTx), nil
	}
	if d.dbPool == nil {
		return nil, errNoPool
	}
	return d.dbPool, nil
}

var errNoPool = errors.New("workflow: the driver has no database pool; pass one to NewEngine or use a transaction")

// interpretError maps pgx errors to River's, as River's driver does.
func interpretError(err error) error {
	switch {
	case errors.Is(err, puddle.ErrClosedPool):
		return riverdriver.ErrClosedPool
	default:
		return err
	}
}

// ProducerInit wraps the producer state River keeps for the client's
// producer, so that a job that finishes without its work having run (an
// unknown kind, an undecodable row: River skips the middleware then) still
// gives back the key it took. A client whose schema is not the engine's, or
// whose engine's exclusive scope differs from the one recorded in the
// schema, refuses to start.
func (p *pilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverProducerInitParams) (int64, riverProducerState, error) {
	if err := p.checkSchemaWiring(params.Schema); err != nil {
		return 0, nil, err // the client refuses to start (client.go)
	}
	if engine := p.driver.engine; engine != nil {
		if err := engine.recordExclusiveScope(ctx, params.Schema, params.ClientID); err != nil {
			return 0, nil, err // the client refuses to start
		}
	}
	id, state, err := p.riverStandardPilot.ProducerInit(ctx, exec, params)
	if err != nil || !p.exclusiveEnabled() {
		return id, state, err
	}
	return id, &exclusiveProducerState{riverProducerState: state, keeper: p.driver.engine.exclusive}, nil
}

// exclusiveProducerState gives back the key of every finished job whose work
// middleware did not (River calls JobFinish for every job it ran).
type exclusiveProducerState struct {
	riverProducerState

	keeper *exclusive.Keeper
}

// JobFinish is called by River for every job its producer ran.
func (s *exclusiveProducerState) JobFinish(job *rivertype.JobRow) {
	s.riverProducerState.JobFinish(job)
	s.keeper.JobFinished(job)
}

// ProducerShutdown forgets the stopping producer's fetch state.
func (p *pilot) ProducerShutdown(ctx context.Context, exec riverdriver.Executor, params *riverProducerShutdownParams) error {
	if p.exclusiveEnabled() {
		p.driver.engine.exclusive.ForgetProducer(params.Schema, params.Queue, p)
	}
	return p.riverStandardPilot.ProducerShutdown(ctx, exec, params)
}

// ProducerKeepAlive is called by each of the client's producers every
// ProducerReportInterval (30 s by default). With exclusivity enabled it also
// sweeps the lock table (exclusive.SweepLocks): it deletes the rows of keys
// taken or given back more than exclusive.FreeLockRetention ago that no
// running attempt holds (stale: the job ended without writing the key free,
// after a crash or as ended keys do; or free), so that they do not linger.
func (p *pilot) ProducerKeepAlive(ctx context.Context, exec riverdriver.Executor, params *riverdriver.ProducerKeepAliveParams) error {
	if err := p.riverStandardPilot.ProducerKeepAlive(ctx, exec, params); err != nil {
		return err
	}
	if !p.exclusiveEnabled() {
		return nil
	}
	q, err := p.driver.querier(exec)
	if err != nil {
		return err
	}
	if _, err := exclusive.SweepLocks(ctx, q, params.Schema, exclusive.FreeLockRetention); err != nil {
		return fmt.Errorf("workflow: sweeping exclusive locks: %w", err)
	}
	return nil
}

// JobSetStateIfRunningMany is River's completer writing job outcomes. Once
// written (outside a transaction of the caller's: committed), the exclusive
// locks of those jobs are stale, so the keeper forgets the ended keys they
// held (exclusive/ended.go).
func (p *pilot) JobSetStateIfRunningMany(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	rows, err := p.riverStandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	if err != nil || !p.exclusiveEnabled() {
		return rows, err
	}
	if _, inTx := exec.(riverdriver.ExecutorTx); !inTx {
		p.driver.engine.exclusive.OutcomesWritten(params.Schema, params.ID)
	}
	return rows, nil
}
