package workflow

import (
	"context"
	"math"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/fairness"
	"github.com/riverbpmn/riverbpmn/fetchplan"
)

// The client's fetch, in one direction: the statement (rendered once by
// package fetchplan from the client's plan, with the exclusive and fair
// steps of packages exclusive and fairness), its arguments by name, the
// run (the exclusive keeper's, or a plain query), and the ending every
// fetch shares (the fair turns carried to the next fetch, telemetry).

// fetchTimeout bounds one fetch, as River bounds its own (HotOperationTimeout).
const fetchTimeout = 10 * time.Second

// schemaStatement is a fetch statement and the schema it was rendered for.
type schemaStatement struct {
	schema string
	*fetchplan.Statement
}

// JobGetAvailable locks up to params.MaxToLock available jobs and moves them
// to running, with the client's fetch statement.
func (p *pilot) JobGetAvailable(
	ctx context.Context,
	exec riverdriver.Executor,
	_ riverProducerState,
	params *riverdriver.JobGetAvailableParams,
) (*riverdriver.JobGetAvailableResult, error) {
	if params.MaxToLock <= 0 {
		return &riverdriver.JobGetAvailableResult{}, nil
	}
	stmt, err := p.fetchStatement(params.Schema)
	if err != nil {
		return nil, err
	}
	q, err := p.driver.querier(exec)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()

	var (
		args         = p.fetchArgs(stmt, params)
		jobs         []*rivertype.JobRow
		decodeErrors map[int64]error
		heldSkipped  int64
	)
	if stmt.Exclusive {
		_, inTx := exec.(riverdriver.ExecutorTx)
		jobs, decodeErrors, err = p.driver.engine.exclusive.Fetch(ctx, exclusive.FetchParams{
			Querier: q, InTx: inTx,
			Schema: params.Schema, Queue: params.Queue, MaxToLock: params.MaxToLock, Producer: p,
			Statement: stmt, Args: args, HeldSkipped: &heldSkipped,
			ScanJob: scanJobRow,
		})
	} else {
		jobs, decodeErrors, err = fetchPlain(ctx, q, stmt, args)
	}
	if err != nil {
		return nil, interpretError(err)
	}
	if stmt.Fair {
		p.driver.fairTurns.advance(params.Schema, params.Queue, jobs, p.driver.acquisition.TenantWeights)
	}
	p.driver.telemetry().Fetched(ctx, params.Queue, p.driver.order, jobs)
	if stmt.CountHeld {
		p.driver.telemetry().KeysHeldSkipped(ctx, params.Queue, p.driver.order, heldSkipped)
	}
	return &riverdriver.JobGetAvailableResult{Jobs: jobs, DecodeErrors: decodeErrors}, nil
}

// fetchPlain runs a fetch statement without the exclusive step.
func fetchPlain(ctx context.Context, q querier, stmt *fetchplan.Statement, args fetchplan.Args) ([]*rivertype.JobRow, map[int64]error, error) {
	values, err := stmt.Bind(args)
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.Query(ctx, stmt.SQL, values...)
	if err != nil {
		return nil, nil, err
	}
	return scanJobRows(rows)
}

// fetchStatement returns the client's fetch statement for schema, rendered
// at the first fetch and kept.
func (p *pilot) fetchStatement(schema string) (*fetchplan.Statement, error) {
	if cached := p.statement.Load(); cached != nil && cached.schema == schema {
		return cached.Statement, nil
	}
	scope := exclusive.None
	if p.exclusiveEnabled() {
		scope = p.driver.engine.config.ExclusiveScope
	}
	stmt, err := renderFetchStatement(p.driver.plan, schema, scope, p.driver.engine != nil && p.driver.engine.config.ExclusiveBatch > 1,
		headIndexMarker(p.driver.acquisition), p.driver.telemetry().KeysHeldSkippedEnabled(context.Background()))
	if err != nil {
		return nil, err
	}
	p.statement.Store(&schemaStatement{schema: schema, Statement: stmt})
	return stmt, nil
}

// renderFetchStatement renders the fetch statement of plan for schema,
// with the exclusive step of scope (none: no exclusive step), taking runs
// of a key when batch is set (Config.ExclusiveBatch above 1), counting the
// candidates passed over because their key was held when countHeld is set
// (telemetry records it); headMarker is the head probe's marker condition
// (headIndexMarker; "" for none). A plan that groups gets the fair step.
func renderFetchStatement(plan *fetchplan.Plan, schema string, scope exclusive.Scope, batch bool, headMarker string, countHeld bool) (*fetchplan.Statement, error) {
	config := fetchplan.StatementConfig{Schema: schema, Fair: fairness.FetchStep()}
	if scope.Enabled() {
		config.Exclusive = exclusive.FetchStep(scope, batch, countHeld, headMarker)
	}
	return plan.Render(config)
}

// fetchArgs are the values of the fetch statement's parameters for one
// fetch, by name: River's fetch parameters, and the steps' (the fair turns,
// the exclusive lookahead and batch). The plan's own come from the plan
// (fetchplan.Statement.Bind); the exclusive keeper adds the ended tokens.
func (p *pilot) fetchArgs(stmt *fetchplan.Statement, params *riverdriver.JobGetAvailableParams) fetchplan.Args {
	args := fetchplan.Args{
		"queue":            params.Queue,
		"kind":             params.Kind,
		"now":              params.Now,
		"max_to_lock":      int32(min(params.MaxToLock, math.MaxInt32)),      //nolint:gosec // bounded above
		"max_attempted_by": int32(min(params.MaxAttemptedBy, math.MaxInt32)), //nolint:gosec // bounded above
		"client_id":        params.ClientID,
	}
	if stmt.Fair {
		for _, name := range fairness.Params {
			args[name] = p.driver.fairTurns.arg(name, params.Schema, params.Queue)
		}
	}
	if stmt.Exclusive {
		engine := p.driver.engine
		args["exclusive_batch"] = int32(min(engine.config.ExclusiveBatch, math.MaxInt32)) //nolint:gosec // bounded above
		lookahead := exclusive.DefaultLookahead
		if engine.config.ExclusiveLookahead > 0 {
			lookahead = engine.config.ExclusiveLookahead
		}
		args["lookahead"] = int32(min(max(lookahead, params.MaxToLock), math.MaxInt32)) //nolint:gosec // bounded above
	}
	return args
}
