package workflow

// Exclusive jobs: how the engine plugs package exclusive into River. With
// Config.ExclusiveScope enforcing (the default), every client of the engine
// fetches with its own fetch plan plus the exclusive step
// (exclusive.FetchStepSQL, run by exclusive.Keeper.Fetch), the work
// middleware gives keys back (exclusive.Keeper.Work), and River's producer
// hooks below tell the keeper what it cannot see from the middleware. The
// invariant and the race analysis are in package exclusive's documentation.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// exclusiveEnabled reports whether this pilot's engine enforces exclusivity.
func (p *pilot) exclusiveEnabled() bool {
	return p.driver.engine != nil && p.driver.engine.config.ExclusiveScope.Enabled()
}

// jobGetAvailableExclusive is JobGetAvailable with strict exclusivity, in one
// statement (the client's plan with the exclusive step).
func (p *pilot) jobGetAvailableExclusive(
	ctx context.Context,
	exec riverdriver.Executor,
	query *fetchQuery,
	params *riverdriver.JobGetAvailableParams,
) (*riverdriver.JobGetAvailableResult, error) {
	q, err := p.driver.querier(exec)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()

	if query.running {
		return p.jobGetAvailableRunning(ctx, exec, query, params)
	}
	_, inTx := exec.(riverdriver.ExecutorTx)
	args := p.fetchArgs(query, query.args, params)
	var heldSkipped int64
	jobs, decodeErrors, err := p.driver.engine.exclusive.Fetch(ctx, exclusive.FetchParams{
		Querier: q, InTx: inTx,
		Schema: params.Schema, Queue: params.Queue, MaxToLock: params.MaxToLock, Producer: p,
		SQL: query.sql, Batch: query.batch, CountHeld: query.countHeld, HeldSkipped: &heldSkipped,
		Args: args, EndedTokensArg: query.endedTokensArg,
		ScanJob: scanJobRow,
	})
	if err != nil {
		return nil, interpretError(err)
	}
	if query.fair {
		p.driver.fairTurns.advance(params.Schema, params.Queue, jobs, p.driver.acquisition.TenantWeights)
	}
	p.driver.telemetry().Fetched(ctx, params.Queue, p.driver.order, jobs)
	if query.countHeld {
		p.driver.telemetry().KeysHeldSkipped(ctx, params.Queue, p.driver.order, heldSkipped)
	}
	return &riverdriver.JobGetAvailableResult{Jobs: jobs, DecodeErrors: decodeErrors}, nil
}

// jobGetAvailableRunning is JobGetAvailable with the running-row mechanism
// (exclusive.RunningRow): two statements in one transaction
// (exclusive.Keeper.FetchRunning).
func (p *pilot) jobGetAvailableRunning(
	ctx context.Context,
	exec riverdriver.Executor,
	query *fetchQuery,
	params *riverdriver.JobGetAvailableParams,
) (*riverdriver.JobGetAvailableResult, error) {
	var sender exclusive.BatchSender
	if execTx, ok := exec.(riverdriver.ExecutorTx); ok {
		sender = p.driver.UnwrapTx(execTx)
	} else if p.driver.dbPool != nil {
		sender = p.driver.dbPool
	} else {
		return nil, errNoPool
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()

	var (
		jobs         []*rivertype.JobRow
		decodeErrors map[int64]error
	)
	_, err := p.driver.engine.exclusive.FetchRunning(ctx, exclusive.RunningFetchParams{
		Sender: sender,
		Schema: params.Schema, Queue: params.Queue, MaxToLock: params.MaxToLock, Producer: p,
		CandidatesSQL: query.candidatesSQL, CandidatesArgs: p.fetchArgs(query, query.candidatesArgs, params),
		TakeSQL: query.sql, TakeArgs: p.fetchArgs(query, query.args, params),
		Scan: func(rows pgx.Rows) (_ []*rivertype.JobRow, err error) {
			jobs, decodeErrors, err = scanJobRows(rows)
			return jobs, err
		},
	})
	if err != nil {
		return nil, interpretError(err)
	}
	p.driver.telemetry().Fetched(ctx, params.Queue, p.driver.order, jobs)
	return &riverdriver.JobGetAvailableResult{Jobs: jobs, DecodeErrors: decodeErrors}, nil
}

// ProducerInit wraps the producer state River keeps for the client's
// producer, so that a job that finishes without its work having run (an
// unknown kind, an undecodable row: River skips the middleware then) still
// gives back the key it took. A client whose schema is not the engine's, or
// whose engine's exclusive scope differs from the one recorded in the
// schema, refuses to start.
func (p *pilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerInitParams) (int64, riverpilot.ProducerState, error) {
	if err := p.checkSchemaWiring(params.Schema); err != nil {
		return 0, nil, err // the client refuses to start (client.go)
	}
	if engine := p.driver.engine; engine != nil {
		if err := engine.recordExclusiveScope(ctx, params.Schema, params.ClientID); err != nil {
			return 0, nil, err // the client refuses to start
		}
	}
	if p.runningRow() {
		if err := p.driver.engine.EnableExclusiveRunningIndex(ctx); err != nil {
			return 0, nil, err // the client refuses to start
		}
	}
	id, state, err := p.StandardPilot.ProducerInit(ctx, exec, params)
	if err != nil || !p.exclusiveEnabled() {
		return id, state, err
	}
	return id, &exclusiveProducerState{ProducerState: state, keeper: p.driver.engine.exclusive}, nil
}

// exclusiveProducerState gives back the key of every finished job whose work
// middleware did not (River calls JobFinish for every job it ran).
type exclusiveProducerState struct {
	riverpilot.ProducerState

	keeper *exclusive.Keeper
}

// JobFinish is called by River for every job its producer ran.
func (s *exclusiveProducerState) JobFinish(job *rivertype.JobRow) {
	s.ProducerState.JobFinish(job)
	s.keeper.JobFinished(job)
}

// ProducerShutdown forgets the stopping producer's fetch state.
func (p *pilot) ProducerShutdown(ctx context.Context, exec riverdriver.Executor, params *riverpilot.ProducerShutdownParams) error {
	if p.exclusiveEnabled() {
		p.driver.engine.exclusive.ForgetProducer(params.Schema, params.Queue, p)
	}
	return p.StandardPilot.ProducerShutdown(ctx, exec, params)
}

// ProducerKeepAlive is called by each of the client's producers every
// ProducerReportInterval (30 s by default). With exclusivity enabled it also
// sweeps the lock table (exclusive.SweepLocks): it deletes the rows of keys
// taken or given back more than exclusive.FreeLockRetention ago that no
// running attempt holds (stale: the job ended without writing the key free,
// after a crash or as ended keys do; or free), so that they do not linger.
func (p *pilot) ProducerKeepAlive(ctx context.Context, exec riverdriver.Executor, params *riverdriver.ProducerKeepAliveParams) error {
	if err := p.StandardPilot.ProducerKeepAlive(ctx, exec, params); err != nil {
		return err
	}
	if !p.exclusiveEnabled() || p.runningRow() {
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
	rows, err := p.StandardPilot.JobSetStateIfRunningMany(ctx, exec, params)
	if err != nil || !p.exclusiveEnabled() {
		return rows, err
	}
	if _, inTx := exec.(riverdriver.ExecutorTx); !inTx {
		if p.runningRow() {
			p.driver.engine.exclusive.OutcomesWrittenRunning(params.Schema, params.ID)
		} else {
			p.driver.engine.exclusive.OutcomesWritten(params.Schema, params.ID)
		}
	}
	return rows, nil
}
