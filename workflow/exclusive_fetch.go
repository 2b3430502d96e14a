package workflow

// Exclusive jobs: how the engine plugs package exclusive into River. With
// Config.ExclusiveScope enforcing (the default), every client of the engine
// fetches with its own fetch plan plus the exclusive step
// (exclusive.FetchStepSQL, run by exclusive.Keeper.Fetch), the work
// middleware gives keys back (exclusive.Keeper.Work), and River's producer
// hooks (the pilot's, pilot.go) tell the keeper what it cannot see from the
// middleware. The
// invariant and the race analysis are in package exclusive's documentation.

import (
	"context"

	"github.com/riverqueue/river/riverdriver"

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
