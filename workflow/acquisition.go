package workflow

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/riverbpmn/riverbpmn/priority"
)

// Acquisition configures how one client picks the jobs it fetches. The zero
// value enables nothing: the client fetches exactly as stock River does (in
// River's order). The ordering options combine, in this precedence: by
// priority, then timers first, then by due date; River's own order breaks
// ties. Every combination is served by an index of migration riverbpmn/003.
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
	for _, id := range a.Deployments {
		if problem := identifierProblem(id, true); problem != "" {
			return fmt.Errorf("workflow: Acquisition.Deployments: deployment id %s %s", quoteForError(id), problem)
		}
	}
	return nil
}

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

// fetchQuery is a client's fetch query: its SQL and the names of its
// parameters in $1, $2, ... order.
type fetchQuery struct {
	sql  string
	args []string
}

var jobGetAvailableTemplate = mustReadSQL("job_get_available.sql")

// newFetchQuery renders the fetch query for acq. Parameters are numbered in
// the order they first appear, so a clause that is left out leaves no gap.
func newFetchQuery(acq *Acquisition, schema string) (*fetchQuery, error) {
	q := &fetchQuery{}
	arg := func(name string) string {
		i := slices.Index(q.args, name)
		if i < 0 {
			q.args = append(q.args, name)
			i = len(q.args) - 1
		}
		return fmt.Sprintf("$%d", i+1)
	}
	tmpl, err := template.New("job_get_available.sql").Funcs(template.FuncMap{"arg": arg}).Parse(jobGetAvailableTemplate)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	if err := tmpl.Execute(&sb, acq); err != nil {
		return nil, err
	}
	q.sql = renderSQL(sb.String(), schema)
	return q, nil
}
