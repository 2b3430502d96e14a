package workflow

// Client liveness (Config.Liveness): how the engine plugs package liveness
// into River. Each client that works jobs holds a liveness session
// (liveness.Keeper) opened when its first producer starts; its pilot fetches
// and writes outcomes only while the session is live, remembers which session
// generation fetched each running job, cancels those jobs when the session is
// fenced and drops their outcomes; River's leader runs the takeover service
// (liveness.Reaper). The timing argument is in liveness/doc.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/startstop"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/liveness"
)

// fencedRunRetention is how long a client remembers a fenced run, so that
// its outcome is dropped however late River's completer retries it.
const fencedRunRetention = 10 * time.Minute

// liveRun is a job attempt fetched by a client with liveness, until its
// outcome is written.
type liveRun struct {
	jobID   int64
	attempt int
	gen     uint64
	fenced  bool // written under the pilot's mu and mu
	mu      sync.Mutex
	cancel  func()    // set under mu while its work runs
	at      time.Time // when fetched, or when fenced
}

// liveRunID names a job attempt in the engine's table of live runs, which
// the middleware reads.
type liveRunID struct {
	jobID   int64
	attempt int
}

// livenessPilot is the pilot of a client whose engine has liveness enabled:
// riverbpmn's pilot with the session wrapped around fetches and outcomes.
type livenessPilot struct {
	*pilot

	engine *Engine
	logger *slog.Logger

	startMu sync.Mutex
	keeper  *liveness.Keeper
	schema  string

	mu   sync.Mutex
	runs map[int64]*liveRun // by job id
}

// wrapPilot gives p the liveness wrapper when the engine has liveness on.
func (d *Driver) wrapPilot(p *pilot) riverPilot {
	if d.engine == nil || !d.engine.livenessOn() {
		return p
	}
	return &livenessPilot{pilot: p, engine: d.engine, runs: make(map[int64]*liveRun)}
}

// PilotInit records the client's logger.
func (p *livenessPilot) PilotInit(archetype *riverArchetype, params *riverPilotInitParams) {
	p.logger = archetype.Logger
	p.pilot.PilotInit(archetype, params)
}

// ProducerInit opens the client's liveness session before its first producer
// fetches anything.
func (p *livenessPilot) ProducerInit(ctx context.Context, exec riverdriver.Executor, params *riverProducerInitParams) (int64, riverProducerState, error) {
	// A client that refuses to start (pilot.ProducerInit) opens no session.
	if err := p.checkSchemaWiring(params.Schema); err != nil {
		return 0, nil, err
	}
	if err := p.engine.recordExclusiveScope(ctx, params.Schema, params.ClientID); err != nil {
		return 0, nil, err
	}
	if err := p.openSession(ctx, params.ClientID, params.Schema); err != nil {
		return 0, nil, err
	}
	// Read the recorded scope again now that the session is open, under
	// the lock Engine.SetExclusiveScope holds while it checks that no
	// client is alive and writes: one of the two sees the other.
	if err := p.engine.recheckExclusiveScope(ctx, params.Schema); err != nil {
		p.closeSession(ctx)
		return 0, nil, err
	}
	return p.pilot.ProducerInit(ctx, exec, params)
}

func (p *livenessPilot) openSession(ctx context.Context, clientID, schema string) error {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if p.keeper != nil && !p.keeper.Closed() {
		return nil // opened by another of the client's producers
	}
	if !p.engine.middlewareUsed.Load() {
		return errors.New("workflow: Config.Liveness needs the engine's middleware in river.Config.Middleware (Engine.Middleware): it cancels a client's running jobs when the client loses its liveness")
	}
	connConfig := p.engine.config.Liveness.ConnConfig
	if connConfig == nil {
		connConfig = p.engine.dbPool.Config().ConnConfig
	}
	keeper := liveness.NewKeeper(p.engine.config.Liveness, liveness.KeeperConfig{
		ConnConfig: connConfig.Copy(),
		Schema:     schema,
		ClientID:   clientID,
		Logger:     p.logger,
		OnLost:     p.fence,
	})
	if err := keeper.Open(ctx); err != nil {
		return fmt.Errorf("workflow: Config.Liveness: %w", err)
	}
	p.engine.tel.SessionsFrom(keeper.Sessions.Load)
	p.keeper, p.schema = keeper, schema
	return nil
}

// closeSession ends the session of a client that refuses to start after
// opening it.
func (p *livenessPilot) closeSession(ctx context.Context) {
	keeper, _ := p.session()
	if keeper == nil {
		return
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	keeper.Close(closeCtx)
}

func (p *livenessPilot) session() (*liveness.Keeper, string) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	return p.keeper, p.schema
}

// JobGetAvailable fetches only while the client's session is live, and
// records which session generation fetched each job.
func (p *livenessPilot) JobGetAvailable(ctx context.Context, exec riverdriver.Executor, state riverProducerState, params *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	keeper, _ := p.session()
	if keeper == nil {
		return &riverdriver.JobGetAvailableResult{}, nil
	}
	opCtx, cancel, gen, err := keeper.Begin(ctx)
	if err != nil {
		return &riverdriver.JobGetAvailableResult{}, nil //nolint:nilerr // not live: fetch nothing until the next session
	}
	defer keeper.End()
	defer cancel()
	res, err := p.pilot.JobGetAvailable(opCtx, exec, state, params)
	if err != nil && errors.Is(opCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		// The fetch outlived the session's deadline (the client stalled or
		// was cut off while it ran): it may have locked jobs this client
		// never learns of. Replacing the session has the leader give them
		// back, with whatever else the session runs.
		keeper.Fence(gen, "a fetch outlived the session's deadline; the jobs it may have locked are given back")
	}
	if err != nil || res == nil {
		return res, err
	}
	now := time.Now()
	fencedThrough := keeper.FencedThrough()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, job := range res.Jobs {
		run := &liveRun{jobID: job.ID, attempt: job.Attempt, gen: gen, at: now, fenced: gen <= fencedThrough}
		p.runs[job.ID] = run
		p.engine.liveRuns.Store(liveRunID{job.ID, job.Attempt}, run)
	}
	return res, nil
}

// JobSetStateIfRunningMany writes outcomes only while the session is live,
// and never those of fenced runs: their jobs are given back by the leader
// (or already were) and may be running elsewhere.
func (p *livenessPilot) JobSetStateIfRunningMany(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	keeper, _ := p.session()
	if keeper == nil {
		return p.pilot.JobSetStateIfRunningMany(ctx, exec, params)
	}
	if keeper.Closed() {
		// The client stopped cleanly (its session row is gone, nothing of it
		// is taken over): River's completer flushes its last outcomes.
		return p.setStates(ctx, exec, params)
	}
	ctx, cancel, _, err := keeper.BeginWait(ctx)
	if err != nil {
		return nil, err
	}
	defer keeper.End()
	defer cancel()
	return p.setStates(ctx, exec, params)
}

// setStates writes the outcomes of params except those of fenced runs, and
// forgets the runs whose outcome it wrote.
func (p *livenessPilot) setStates(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	keep := make([]int, 0, len(params.ID))
	p.mu.Lock()
	for i, id := range params.ID {
		if run := p.runs[id]; run != nil && run.fenced {
			continue
		}
		keep = append(keep, i)
	}
	p.mu.Unlock()
	if len(keep) == 0 {
		return []*rivertype.JobRow{}, nil
	}
	if len(keep) < len(params.ID) {
		params = selectOutcomes(params, keep)
	}
	rows, err := p.pilot.JobSetStateIfRunningMany(ctx, exec, params)
	if err != nil {
		return nil, err
	}
	// A run is forgotten once its outcome is written, and not before: an
	// outcome whose write failed is retried by River, and must be dropped if
	// the session is fenced in between. A transaction's write (JobCompleteTx)
	// may still roll back, so its run is kept until River's completer writes.
	if _, inTx := exec.(riverdriver.ExecutorTx); !inTx {
		p.mu.Lock()
		for _, id := range params.ID {
			if run := p.runs[id]; run != nil && !run.fenced {
				delete(p.runs, id)
				p.engine.liveRuns.Delete(liveRunID{run.jobID, run.attempt})
			}
		}
		p.mu.Unlock()
	}
	return rows, nil
}

// selectOutcomes returns the outcomes of params at indexes keep.
func selectOutcomes(params *riverdriver.JobSetStateIfRunningManyParams, keep []int) *riverdriver.JobSetStateIfRunningManyParams {
	out := &riverdriver.JobSetStateIfRunningManyParams{Now: params.Now, Schema: params.Schema}
	for _, i := range keep {
		out.ID = append(out.ID, params.ID[i])
		out.Attempt = append(out.Attempt, params.Attempt[i])
		out.ErrData = append(out.ErrData, params.ErrData[i])
		out.FinalizedAt = append(out.FinalizedAt, params.FinalizedAt[i])
		out.MetadataDoMerge = append(out.MetadataDoMerge, params.MetadataDoMerge[i])
		out.MetadataUpdates = append(out.MetadataUpdates, params.MetadataUpdates[i])
		out.ScheduledAt = append(out.ScheduledAt, params.ScheduledAt[i])
		out.State = append(out.State, params.State[i])
	}
	return out
}

// fence is the Keeper's OnLost: every run fetched under generation gen or
// earlier is cancelled and its outcome will be dropped.
func (p *livenessPilot) fence(gen uint64) {
	p.engine.tel.Fences(context.Background())
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, run := range p.runs {
		switch {
		case run.fenced && now.Sub(run.at) > fencedRunRetention:
			delete(p.runs, id)
		case !run.fenced && run.gen <= gen:
			run.mu.Lock()
			run.fenced, run.at = true, now
			if run.cancel != nil {
				run.cancel()
			}
			run.mu.Unlock()
		}
	}
}

// JobGetStuck is River's rescuer's look for stuck jobs, without the jobs of
// dead sessions: the leader's takeover gives those back without using an
// attempt, however short RescueStuckJobsAfter is. It pages through River's
// own query so that a page it filters never hides the jobs after it.
func (p *livenessPilot) JobGetStuck(ctx context.Context, exec riverdriver.Executor, params *riverdriver.JobGetStuckParams) ([]*rivertype.JobRow, error) {
	q, err := p.driver.querier(exec)
	if err != nil {
		return nil, err
	}
	page := *params
	var stuck []*rivertype.JobRow
	for {
		jobs, err := p.pilot.JobGetStuck(ctx, exec, &page)
		if err != nil {
			return nil, err
		}
		ids := make([]int64, len(jobs))
		for i, job := range jobs {
			ids[i] = job.ID
		}
		dead, err := liveness.JobsOfDeadSessions(ctx, q, params.Schema, ids)
		if err != nil {
			return nil, fmt.Errorf("workflow: %w", err)
		}
		for _, job := range jobs {
			if !dead[job.ID] {
				stuck = append(stuck, job)
			}
		}
		if len(stuck) >= params.Max || len(jobs) < page.Max {
			if len(stuck) > params.Max {
				stuck = stuck[:params.Max]
			}
			return stuck, nil
		}
		page.AfterID = jobs[len(jobs)-1].ID
	}
}

// runsUnderWay reports whether the client has fetched runs whose outcome is
// not written yet (fenced runs aside: they are not the client's anymore).
func (p *livenessPilot) runsUnderWay() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, run := range p.runs {
		if !run.fenced {
			return true
		}
	}
	return false
}

// PluginServices adds a service that closes the client's session when the
// client stops, once its last run's outcome is written. A stop that gives
// up with jobs still running (Client.Stop's context done first) leaves the
// session open: it stays alive as long as the process, and if the process
// exits with the jobs unfinished, its lock goes with it and the leader gives
// them back as for a crash, without using an attempt. Closed earlier, the
// session would say the client left cleanly, and nothing would free its
// jobs but River's rescuer.
func (p *livenessPilot) PluginServices() []startstop.Service {
	return append(p.pilot.PluginServices(), startstop.StartStopFunc(func(ctx context.Context, shouldStart bool, started, stopped func()) error {
		if !shouldStart {
			return nil
		}
		go func() {
			defer stopped()
			started()
			<-ctx.Done()
			for p.runsUnderWay() {
				time.Sleep(20 * time.Millisecond)
			}
			if keeper, _ := p.session(); keeper != nil {
				closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				keeper.Close(closeCtx)
			}
		}()
		return nil
	}))
}

// PluginMaintenanceServices adds the takeover service to those River runs
// on its elected leader.
func (p *livenessPilot) PluginMaintenanceServices() []startstop.Service {
	reaper := liveness.NewReaper(p.engine.config.Liveness, p.engine.dbPool, func() (string, bool) {
		keeper, schema := p.session()
		return schema, keeper != nil
	}, p.logger)
	reaper.OnTakeover = func(t liveness.Takeover) { p.engine.tel.Takeover(context.Background(), len(t.JobIDs)) }
	return append(p.pilot.PluginMaintenanceServices(), reaper)
}

// workLiveness runs a job fetched by a client with liveness with a context
// its client cancels when it loses its liveness.
func (e *Engine) workLiveness(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !e.livenessOn() {
		return doInner(ctx)
	}
	value, ok := e.liveRuns.Load(liveRunID{job.ID, job.Attempt})
	if !ok {
		return doInner(ctx)
	}
	run := value.(*liveRun) //nolint:forcetypeassert // only runs are stored
	defer e.liveRuns.Delete(liveRunID{job.ID, job.Attempt})
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cancelRun := func() { cancel(errLivenessLost) }
	run.mu.Lock()
	run.cancel = cancelRun
	fenced := run.fenced
	run.mu.Unlock()
	if fenced {
		cancelRun()
	}
	return doInner(ctx)
}

// errLivenessLost is the cause of a job context cancelled by a fence.
var errLivenessLost = errors.New("workflow: this client lost its liveness; the job's run is given back to run elsewhere")

// ClientSessions lists the liveness sessions of the engine's schema (see
// Config.Liveness), oldest first: which clients prove they are alive, and
// which died and when, until the leader has given their jobs back.
func (e *Engine) ClientSessions(ctx context.Context) ([]*liveness.Session, error) {
	if e.dbPool == nil {
		return nil, errNoPool
	}
	sessions, err := liveness.Sessions(ctx, e.dbPool, e.config.Schema)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return sessions, nil
}
