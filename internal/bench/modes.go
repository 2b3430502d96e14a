package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/liveness"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Mode is one riverbpmn configuration measured against stock River. Each
// round runs the mode's workload through stock River, then through the mode,
// on the same database, so their ratio is measured under the same load.
//
// A mode is a setup function plus, when its workload differs from the
// command's, its own job count and worker count.
type Mode struct {
	// Name is the mode's name on the command line (--mode) and in reports.
	Name string

	// Summary says in a few words what the mode enables.
	Summary string

	// Jobs, when non-zero, is the mode's job count when the command is not
	// given --jobs (DefaultOptions.Jobs otherwise); --jobs always wins.
	// Workers, when non-zero, replaces the command's --workers for this
	// mode. Both apply to the stock side too.
	Jobs    int
	Workers int

	// Rate is the riverbpmn side's rough throughput in jobs/s on the
	// 2-core reference machine at River's default fetch settings, for the
	// duration estimate printed before a run (0: as stock River).
	Rate float64

	// Versus names another mode whose riverbpmn jobs/s this mode's is
	// compared with (the report gives the ratio), and VersusTarget is the
	// lowest acceptable ratio (0: none).
	Versus       string
	VersusTarget float64

	// Target is the lowest acceptable ratio of the mode's median jobs/s to
	// stock River's (0.99 = 99%); zero means none. Reports say whether it is
	// met; it is a goal, not a gate.
	Target float64

	// StressTarget, when non-zero, replaces Target in a stress run: a fetch
	// cooldown below River's default, where the fetch limiter no longer caps
	// both sides near 1,000 jobs/s and the database's cost per job decides.
	// Negative: no target against stock River in a stress run (the mode is
	// judged against its Versus mode there).
	StressTarget float64

	// WorkersTarget, when non-zero, replaces Target in a run with more than
	// the default 100 workers at River's default fetch cooldown, where a
	// fetch takes up to that many jobs; StressTarget applies when that is
	// zero. Negative: none.
	WorkersTarget float64

	// Diagnostic modes run only when named with --mode: they explain a
	// result rather than measure a riverbpmn feature.
	Diagnostic bool

	// Setup builds the riverbpmn side of one run. It is called once per
	// round, so a driver's run-time state never carries over between runs.
	Setup func(ctx context.Context, env *Env) (*Side, error)
}

// Env is what a mode's Setup gets.
type Env struct {
	// Engine is a riverbpmn engine on the benchmark's pool and schema.
	Engine *workflow.Engine

	// Pool is the benchmark's database pool.
	Pool *pgxpool.Pool

	// Workload is the command's workload.
	Workload Workload

	// Options are the command's options.
	Options *Options
}

// RiverBPMN returns a riverbpmn side with acquisition acq: the engine's
// driver for acq, the engine's middleware, and jobs that carry the
// workload's job contexts (a copy of env.Workload, which the caller may
// change).
func (env *Env) RiverBPMN(acq workflow.Acquisition) (*Side, error) {
	return env.engineSide(env.Engine, acq)
}

// engineSide returns the riverbpmn side of engine with acquisition acq,
// wired as workflow.NewClient wires a client: the engine's driver for acq,
// middleware and retry policy, and jobs that carry the workload's job
// contexts (a copy of env.Workload).
func (env *Env) engineSide(engine *workflow.Engine, acq workflow.Acquisition) (*Side, error) {
	driver, err := engine.NewDriver(acq)
	if err != nil {
		return nil, err
	}
	workload := env.Workload
	return &Side{
		Driver:      driver,
		Middleware:  []rivertype.Middleware{engine.Middleware()},
		RetryPolicy: engine.RetryPolicy(),
		Workload:    &workload,
		Prepare:     fetchOrderIndex(engine, acq),
		Scope:       engine.Exclusive().ConfiguredScope(),
	}, nil
}

// fetchOrderIndex returns a Side.Prepare that builds the fetch-order index
// of acq (which the side's client would otherwise build when it starts,
// inside the timed run).
func fetchOrderIndex(engine *workflow.Engine, acq workflow.Acquisition) func(ctx context.Context) error {
	return func(ctx context.Context) error { return engine.EnableFetchOrderIndexes(ctx, acq) }
}

// exclusiveSide returns a riverbpmn side on an engine that enforces
// exclusivity per process instance, on the benchmark's schema, whose client
// acquires as acq says, with workflow.Config.ExclusiveBatch batch.
func (env *Env) exclusiveSide(acq workflow.Acquisition, batch ...int) (*Side, error) {
	// Liveness (on by default) stays off, as on the base engine, so that
	// the mode measures exclusivity alone.
	config := &workflow.Config{
		Schema:         env.Options.Schema,
		ExclusiveScope: exclusive.ProcessInstance,
		Liveness:       liveness.Config{Disabled: true},
	}
	if len(batch) > 0 {
		config.ExclusiveBatch = batch[0]
	}
	engine, err := workflow.NewEngine(env.Pool, config)
	if err != nil {
		return nil, err
	}
	return env.engineSide(engine, acq)
}

// eventsSide is the riverbpmn side with job status events enabled for the
// run; Cleanup switches them off and empties the outbox.
func eventsSide(ctx context.Context, env *Env) (*Side, error) {
	side, err := env.RiverBPMN(workflow.Acquisition{})
	if err != nil {
		return nil, err
	}
	if err := env.Engine.Events().Enable(ctx); err != nil {
		return nil, err
	}
	side.Cleanup = func(ctx context.Context) error {
		if err := env.Engine.Events().Disable(ctx); err != nil {
			return err
		}
		_, err := env.Pool.Exec(ctx, "TRUNCATE "+table(env.Options.Schema, "river_bpmn_event"))
		return err
	}
	return side, nil
}

// benchExclusiveBatch is the exclusive-batch and camunda-batch modes'
// workflow.Config.ExclusiveBatch: the jobs of one instance in the default
// workload (10).
const benchExclusiveBatch = 10

// camundaAcquisition is how a Camunda job executor acquires: by priority,
// within its priority range (here covering every job), deployment aware
// (here with every deployment of the workload registered).
func camundaAcquisition(w Workload) workflow.Acquisition {
	r := w.PriorityRange()
	return workflow.Acquisition{ByPriority: true, PriorityRange: &r, DeploymentAware: true, Deployments: w.DeploymentIDs()}
}

// Side is how one side of a comparison runs: the River driver and
// middleware of its client and the jobs it inserts.
type Side struct {
	// Driver is the client's driver.
	Driver riverdriver.Driver[pgx.Tx]

	// Middleware is the client's river.Config.Middleware.
	Middleware []rivertype.Middleware

	// RetryPolicy is the client's river.Config.RetryPolicy: the engine's
	// for a riverbpmn side, as workflow.NewClient wires it; nil (River's
	// default) for stock River.
	RetryPolicy river.ClientRetryPolicy

	// Workload gives every job its job context; nil inserts plain River
	// jobs (the stock side).
	Workload *Workload

	// Prepare, if set, runs before the side's backlog is queued: what the
	// side's client would do when it starts and that must not be timed,
	// such as building its fetch-order index.
	Prepare func(ctx context.Context) error

	// Cleanup, if set, runs after the side's run (even a failed one), to
	// undo what Setup changed in the database.
	Cleanup func(ctx context.Context) error

	// Scope is the exclusive scope of a riverbpmn side's engine, recorded
	// in the schema before its run.
	Scope exclusive.Scope
}

// stockSide is stock River: its own pgx driver, no middleware, plain jobs.
func stockSide(pool *pgxpool.Pool) *Side {
	return &Side{Driver: riverpgxv5.New(pool)}
}

// Fairness workload: one big tenant and fairSmallTenants tenants of
// fairSmallJobs jobs each (scaled down with --jobs below 2,000).
const (
	fairnessJobs     = 201_000
	fairSmallTenants = 50
	fairSmallJobs    = 20
)

// tenantsSide is the fairness workload on a riverbpmn side of acquisition
// acq: the big tenant's jobs first, then the small tenants'.
func tenantsSide(env *Env, acq workflow.Acquisition) (*Side, error) {
	side, err := env.RiverBPMN(acq)
	if err != nil {
		return nil, err
	}
	jobs := env.Options.Jobs
	if jobs == 0 {
		jobs = fairnessJobs
	}
	perTenant := fairSmallJobs
	if jobs < 2*fairSmallTenants*fairSmallJobs {
		perTenant = max(1, jobs/(2*fairSmallTenants))
	}
	side.Workload.SmallTenants = fairSmallTenants
	side.Workload.SmallTenantJobs = perTenant
	side.Workload.SmallTenantsFrom = max(0, jobs-fairSmallTenants*perTenant)
	return side, nil
}

// Modes returns the riverbpmn modes the bench command knows, in the order
// it runs them.
func Modes() []Mode {
	return []Mode{
		{
			Name:         "none",
			Summary:      "riverbpmn driver and middleware, no acquisition feature; jobs carry a job context",
			Target:       0.99,
			StressTarget: 0.95,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				return env.RiverBPMN(workflow.Acquisition{})
			},
		},
		{
			Name:       "stock-metadata",
			Summary:    "diagnostic: stock River (no riverbpmn code) working jobs that carry the job context metadata",
			Diagnostic: true,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				workload := env.Workload
				return &Side{Driver: riverpgxv5.New(env.Pool), Workload: &workload}, nil
			},
		},
		{
			Name:       "stock-metadata-string",
			Summary:    "diagnostic: stock-metadata with each job context stored as one string (its elements joined by tabs): what the context's entries in River's GIN index on metadata cost",
			Diagnostic: true,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				workload := env.Workload
				workload.OneStringContext = true
				return &Side{Driver: riverpgxv5.New(env.Pool), Workload: &workload}, nil
			},
		},
		{
			Name:       "priority",
			Summary:    "diagnostic: by priority only (no range, no deployment filter)",
			Diagnostic: true,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				return env.RiverBPMN(workflow.Acquisition{ByPriority: true})
			},
		},
		{
			Name:          "exclusive",
			Summary:       "strict exclusivity per process instance, River's order: jobs over --instances instances (default 10,000 jobs, 1,000 instances: 10 each)",
			Jobs:          10_000,
			Rate:          1_500,
			Target:        0.99,
			StressTarget:  0.90,
			WorkersTarget: 0.70,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(workflow.Acquisition{})
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = env.Options.Instances
				return side, nil
			},
		},
		{
			Name: "camunda",
			Summary: "Camunda's job executor: exclusive per process instance, by priority, a priority range covering every job, " +
				"deployment aware with the jobs' deployments; the exclusive mode's workload",
			Jobs:          10_000,
			Rate:          1_500,
			Target:        0.99,
			StressTarget:  0.85,
			WorkersTarget: 0.60,
			Versus:        "exclusive",
			VersusTarget:  0.90,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(camundaAcquisition(env.Workload))
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = env.Options.Instances
				return side, nil
			},
		},
		{
			Name: "exclusive-batch",
			Summary: fmt.Sprintf("the exclusive mode with Camunda's batching of a key's jobs (workflow.Config.ExclusiveBatch %d: "+
				"a fetch takes runs of a key's waiting jobs, which the client runs one after another)", benchExclusiveBatch),
			Jobs:          10_000,
			Rate:          1_500,
			Target:        0.99,
			StressTarget:  0.80,
			WorkersTarget: 0.90,
			Versus:        "exclusive",
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(workflow.Acquisition{}, benchExclusiveBatch)
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = env.Options.Instances
				return side, nil
			},
		},
		{
			Name:         "camunda-batch",
			Summary:      fmt.Sprintf("the camunda mode with Camunda's batching of a key's jobs (workflow.Config.ExclusiveBatch %d)", benchExclusiveBatch),
			Jobs:         10_000,
			Rate:         1_500,
			Target:       0.99,
			StressTarget: 0.75,
			Versus:       "camunda",
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(camundaAcquisition(env.Workload), benchExclusiveBatch)
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = env.Options.Instances
				return side, nil
			},
		},
		{
			Name:       "exclusive-priority",
			Summary:    "diagnostic: the camunda mode without its filters (exclusive per process instance, by priority)",
			Diagnostic: true,
			Jobs:       10_000,
			Rate:       1_500,
			Versus:     "exclusive",
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(workflow.Acquisition{ByPriority: true})
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = env.Options.Instances
				return side, nil
			},
		},
		{
			Name:    "exclusive-one-instance",
			Summary: "strict exclusivity, one process instance with all jobs exclusive (default 2,000), MaxWorkers 1",
			Jobs:    2_000,
			Workers: 1,
			Target:  0.50,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				side, err := env.exclusiveSide(workflow.Acquisition{})
				if err != nil {
					return nil, err
				}
				side.Workload.Instances = 1
				return side, nil
			},
		},
		{
			Name:    "events",
			Summary: "job status events on (outbox trigger, RUNNING and SUCCEEDED per job); off again after the run",
			// The target of every mode at River's defaults; under stress,
			// events are judged against events off (Versus).
			Target:       0.99,
			StressTarget: -1,
			// Events on at >= 90% of events off's jobs/s.
			Versus:       "none",
			VersusTarget: 0.90,
			Setup:        eventsSide,
		},
		{
			Name: "fairness",
			Summary: "fair by tenant: one tenant with 200,000 jobs queued first, then 50 tenants with 20 each (--jobs scales it); " +
				"reports when the small tenants' jobs had all completed",
			Jobs:         fairnessJobs,
			Versus:       "tenants",
			VersusTarget: 0.85,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				return tenantsSide(env, workflow.Acquisition{FairByTenant: true})
			},
		},
		{
			Name:       "tenants",
			Summary:    "diagnostic: the fairness mode's workload without fairness (River's order: the big tenant's backlog first)",
			Diagnostic: true,
			Jobs:       fairnessJobs,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				return tenantsSide(env, workflow.Acquisition{})
			},
		},
		{
			Name:         "priority-range-deployment",
			Summary:      "by priority, a priority range covering every job, deployment aware with the jobs' deployments",
			Target:       0.99,
			StressTarget: 0.85,
			Setup: func(_ context.Context, env *Env) (*Side, error) {
				r := env.Workload.PriorityRange()
				return env.RiverBPMN(workflow.Acquisition{
					ByPriority:      true,
					PriorityRange:   &r,
					DeploymentAware: true,
					Deployments:     env.Workload.DeploymentIDs(),
				})
			},
		},
		telemetryMode(),
	}
}

// ModeNames returns the names of Modes, diagnostic ones last.
func ModeNames() []string {
	var names, diagnostic []string
	for _, m := range Modes() {
		if m.Diagnostic {
			diagnostic = append(diagnostic, m.Name)
		} else {
			names = append(names, m.Name)
		}
	}
	return append(names, diagnostic...)
}

// selectModes returns the modes named, in the order named, or all but the
// diagnostic ones for none; an error names an unknown one.
func selectModes(names []string) ([]Mode, error) {
	all := Modes()
	if len(names) == 0 {
		var selected []Mode
		for _, m := range all {
			if !m.Diagnostic {
				selected = append(selected, m)
			}
		}
		return selected, nil
	}
	var selected []Mode
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		found := false
		for _, m := range all {
			if m.Name == name {
				selected = append(selected, m)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown mode %q (known: %s)", name, strings.Join(ModeNames(), ", "))
		}
	}
	return selected, nil
}
