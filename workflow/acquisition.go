package workflow

import (
	"fmt"
	"slices"
	"sync"

	"github.com/riverbpmn/riverbpmn/fairness"
	"github.com/riverbpmn/riverbpmn/fetchplan"
	"github.com/riverbpmn/riverbpmn/priority"
)

// Acquisition configures how one client picks the jobs it fetches. The zero
// value enables nothing: the client fetches exactly as stock River does (in
// River's order). The ordering options combine, in this precedence: by
// priority, then timers first, then by due date; River's own order
// (priority, scheduled_at, id) breaks ties. The filters (PriorityRange,
// DeploymentAware) restrict which jobs the client may take. Every
// combination is served by an index (River's, or one of migration
// riverbpmn/003) and builds one query, once per client (package fetchplan).
//
// Every option combines with exclusive execution (Config.ExclusiveScope):
//
//   - Exclusivity stays absolute: while an exclusive job of key K runs on
//     any client, no other exclusive job of K starts, whatever the clients'
//     options, queues or kinds.
//   - Across keys, the client fetches in its acquisition order.
//   - Within one key, the job that runs next on the client is the key's
//     head: the first waiting job of the key in the client's order among the
//     jobs this client may take. On a by-priority client a priority-10 job
//     of an instance runs before its priority-1 sibling; on a timers-first
//     client the instance's timers run before its other jobs.
//   - Clients with different filters may see different heads of one key:
//     each runs the first job it may take, and a job it may not take never
//     holds it back. The key's jobs then run one at a time in an order that
//     no single client's order gives (say priority 3 on a client of range
//     [0, 10], then priority 15 on a client of range [5, 20]).
//   - The next exclusive job of a key starts as soon as its predecessor's
//     work returns, without waiting for a poll, with any options.
//
// A job whose context holds a bad value (a priority that is a string, a
// deployment that is a number) counts as priority 0, not a timer, with no
// deployment; its exclusive key is ExclusiveKeyOf's. Bad data never stops
// other jobs from being fetched.
type Acquisition struct {
	// ByPriority fetches jobs by their int64 priority, highest first
	// (strictly: no aging).
	ByPriority bool

	// TimersFirst fetches timer jobs (JobContext.JobType JobTypeTimer)
	// before all others.
	TimersFirst bool

	// ByDueDate fetches jobs by their due date (River's scheduled_at),
	// earliest first.
	ByDueDate bool

	// PriorityRange, with ByPriority, restricts the client to jobs whose
	// priority lies in the inclusive range. It requires ByPriority, and Min
	// must not exceed Max.
	PriorityRange *priority.Range

	// DeploymentAware restricts the client to jobs of the deployments it has
	// registered, plus every job with no deployment (plain River jobs
	// included). Register more at run time with Driver.RegisterDeployment.
	DeploymentAware bool

	// Deployments is the initial set of registered deployments, used only
	// with DeploymentAware.
	Deployments []string

	// FairByTenant fetches fairly across tenants (JobContext.TenantID), in
	// rounds: in each round every tenant that has jobs waiting in the queue
	// gets its weight in slots (TenantWeights, default 1), the tenants
	// taking their turns in byte order of their ids, each tenant's jobs in
	// this client's order (by priority, timers first, due date, River's
	// order); jobs without a tenant form one tenant of their own. The round
	// in progress carries from one fetch to the next, so the weights hold
	// whatever the fetch size: a busy pool that fetches one or two jobs as
	// slots free up shares them as a fetch of hundreds does, and a tenant
	// whose jobs arrive waits at most one round for its first. A tenant
	// with nothing this client may take loses its turn in the round (no
	// credit builds up while it is idle). The client keeps its place in the
	// rounds in memory (no statement, no write): a client that restarts
	// starts a new round, which may give the tenants served in the
	// interrupted one up to their weight again, once. Several fair clients
	// of a queue each take their turns; the jobs they take together are in
	// the weights' ratio to within one round per client. It composes with
	// every other option and with exclusivity, which still takes only a
	// key's head: the fairness only chooses among the candidates, and the
	// rounds count the jobs taken, not those passed over (a held key). A
	// fetch may take fewer than N jobs when tenants have fewer waiting jobs
	// than their share of it; the next fetch takes more. It reads the tenant
	// index of the client's order (TenantFairnessIndex), which the client
	// creates when it starts (EnableTenantFairness): only the orders of fair
	// clients have one, and each costs every insert of an available job an
	// index entry. Package fairness holds the mechanism and says more.
	FairByTenant bool

	// TenantWeights, with FairByTenant, gives a tenant w >= 1 slots per
	// round (default 1): with weights 3 and 1, two tenants with work share
	// the jobs 3:1 however the client fetches. The key "" is the weight of
	// jobs without a tenant.
	TenantWeights map[string]int
}

// Validate reports an invalid acquisition configuration, naming the field
// and the value.
func (a *Acquisition) Validate() error {
	if a.PriorityRange != nil {
		if err := a.PriorityRange.Validate(); err != nil {
			return fmt.Errorf("workflow: Acquisition.PriorityRange %s: %w", a.PriorityRange, err)
		}
		if !a.ByPriority {
			return fmt.Errorf("workflow: Acquisition.PriorityRange %s applies only when acquiring by priority; set ByPriority", a.PriorityRange)
		}
	}
	if len(a.Deployments) > 0 && !a.DeploymentAware {
		return fmt.Errorf("workflow: Acquisition.Deployments %q are used only with DeploymentAware; set it", a.Deployments)
	}
	if len(a.TenantWeights) > 0 && !a.FairByTenant {
		return fmt.Errorf("workflow: Acquisition.TenantWeights are used only with FairByTenant; set it")
	}
	for tenant, weight := range a.TenantWeights {
		if tenant != "" {
			if problem := identifierProblem(tenant, true); problem != "" {
				return fmt.Errorf("workflow: Acquisition.TenantWeights: tenant id %s %s", quoteForError(tenant), problem)
			}
		}
		if weight < 1 || weight > fairness.MaxWeight {
			return fmt.Errorf("workflow: Acquisition.TenantWeights[%s] %d must be between 1 and %d", quoteForError(tenant), weight, fairness.MaxWeight)
		}
	}
	for _, id := range a.Deployments {
		if problem := identifierProblem(id, true); problem != "" {
			return fmt.Errorf("workflow: Acquisition.Deployments: deployment id %s %s", quoteForError(id), problem)
		}
	}
	return nil
}

// tenantExpr is a job's tenant (JobContext.TenantID), ” for none (never
// NULL, so that the jobs of no tenant are one more tenant found by equality);
// the tenant indexes (TenantFairnessIndex, one per order) are on it.
const tenantExpr = "coalesce(" + schemaMarker + "river_bpmn_ctx_tenant(river_job.metadata), '')"

// deploymentSet is a client's set of registered deployments. Fetches read a
// snapshot; changes take effect at the next fetch.
type deploymentSet struct {
	mu  sync.Mutex
	ids []string // sorted, no duplicates; replaced, never mutated
}

func newDeploymentSet(ids []string) *deploymentSet {
	s := &deploymentSet{}
	for _, id := range ids {
		s.add(id)
	}
	return s
}

func (s *deploymentSet) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		return []string{} // an empty array, not NULL: no deployment matches
	}
	return s.ids
}

func (s *deploymentSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearch(s.ids, id)
	if !found {
		s.ids = slices.Insert(slices.Clone(s.ids), i, id)
	}
}

func (s *deploymentSet) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearch(s.ids, id)
	if found {
		s.ids = slices.Delete(slices.Clone(s.ids), i, i+1)
	}
	return found
}

// acquisitionParts returns the fetch plan parts of acq (package fetchplan),
// in the precedence of their order keys: by priority, then timers first,
// then by due date; then the filters. Each order has its partial
// fetch-order index, created on demand (FetchOrderIndex, named in the
// comment), and with exclusive jobs its head-of-key index
// (ExclusiveHeadIndex); deployments are read from the driver's set at each
// fetch. A new acquisition option is a new part
// here, and nothing else in the fetch changes.
func acquisitionParts(acq *Acquisition, deployments *deploymentSet) []fetchplan.Part {
	const (
		priorityExpr   = schemaMarker + "river_bpmn_ctx_priority(river_job.metadata)"
		isTimerExpr    = schemaMarker + "river_bpmn_ctx_is_timer(river_job.metadata)"
		deploymentExpr = schemaMarker + "river_bpmn_ctx_deployment(river_job.metadata)"
	)
	var parts []fetchplan.Part
	// With exclusivity, the head-of-key index of the order holds these
	// keys (KeyIndexed), ascending: by priority alone, migration
	// riverbpmn/020's (~priority); any order with timers first or due date,
	// the one ExclusiveHeadIndex names (a timer first as NOT is_timer).
	if acq.ByPriority { // index river_bpmn_fetch_p*
		parts = append(parts, fetchplan.Part{Name: "ByPriority", Order: []fetchplan.OrderKey{{Expr: priorityExpr, Desc: true, KeyIndexed: true}}})
	}
	if acq.TimersFirst { // index river_bpmn_fetch_*t*
		parts = append(parts, fetchplan.Part{Name: "TimersFirst", Order: []fetchplan.OrderKey{{Expr: isTimerExpr, Desc: true, KeyIndexed: true, Ascending: "(NOT " + isTimerExpr + ")"}}})
	}
	if acq.ByDueDate { // index river_bpmn_fetch_*d
		parts = append(parts, fetchplan.Part{Name: "ByDueDate", Order: []fetchplan.OrderKey{{Expr: "river_job.scheduled_at", KeyIndexed: true}}})
	}
	if r := acq.PriorityRange; r != nil { // a filter on the ByPriority index's leading key
		min, max := r.Min, r.Max
		parts = append(parts, fetchplan.Part{
			Name:   "PriorityRange",
			Filter: priorityExpr + " BETWEEN @priority_min::bigint AND @priority_max::bigint",
			Params: []fetchplan.Param{
				{Name: "priority_min", Value: func() any { return min }},
				{Name: "priority_max", Value: func() any { return max }},
			},
		})
	}
	if acq.DeploymentAware { // a filter: registered deployments, plus every job with no deployment
		parts = append(parts, fetchplan.Part{
			Name:   "DeploymentAware",
			Filter: "(" + deploymentExpr + " IS NULL OR " + deploymentExpr + " = ANY(@deployments::text[]))",
			Params: []fetchplan.Param{{Name: "deployments", Value: func() any { return deployments.snapshot() }}},
		})
	}
	if acq.FairByTenant { // index TenantFairnessIndex(acq), created by EnableTenantFairness
		parts = append(parts, fairness.Part(tenantExpr, acq.TenantWeights))
	}
	return parts
}

// headIndexMarker is the condition, over the row river_job, that the head
// probe of a client fetching in acq's order states so that it reads its
// order's on-demand head-of-key index (ExclusiveHeadIndex; migration
// riverbpmn/023 says why); "" for River's order and by priority alone,
// whose head-of-key indexes are migrations'.
func headIndexMarker(acq Acquisition) string {
	if !hasOnDemandHeadIndex(acq) {
		return ""
	}
	return schemaMarker + "river_bpmn_head_index(river_job.metadata, '" + orderSuffix(acq) + "')"
}
