package workflow

import (
	"context"
	"strconv"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/instance"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/search"
)

// MaxProcessInstanceJobs caps how many jobs ProcessInstanceJobs returns.
const MaxProcessInstanceJobs = 10_000

// TreeMember is a process instance of a call hierarchy, with its
// unfinished and failed jobs and its open incidents (instance.TreeMember).
type TreeMember = instance.TreeMember

// Instances returns the handle on the schema's process instances (package
// instance): List pages through the instances that have jobs a
// search.Filter selects, Jobs pages through one instance's jobs in every
// state, Tree shows a root's call hierarchy with each subtree's open
// incidents, and Status reads the status and progress of an instance's
// jobs.
func (e *Engine) Instances() *instance.Instances { return e.instances.get(e.newInstances) }

// newInstances makes the engine's instances handle.
func (e *Engine) newInstances() *instance.Instances {
	return instance.New(instance.Config{DB: e.db(), Schema: e.config.Schema})
}

// checkInstanceID refuses a bad process instance id with the
// JobContextError the deprecated instance methods have always returned.
func checkInstanceID(field, id string) error {
	if problem := identifierProblem(id, true); problem != "" {
		return &JobContextError{Field: field, Value: id, Problem: problem}
	}
	return nil
}

// ProcessInstanceJobs returns the jobs of one process instance in every state,
// oldest first (at most MaxProcessInstanceJobs). An empty id is an error
// naming the field.
//
// Deprecated: use [Engine.Instances] and [instance.Instances.Jobs].
func (e *Engine) ProcessInstanceJobs(ctx context.Context, processInstanceID string) ([]*rivertype.JobRow, error) {
	if err := checkInstanceID("process_instance_id", processInstanceID); err != nil {
		return nil, err
	}
	return allPages(MaxProcessInstanceJobs, func(after string) ([]*rivertype.JobRow, string, error) {
		res, err := e.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: processInstanceID, Limit: listpage.MaxLimit, After: after})
		if err != nil {
			return nil, "", err
		}
		return res.Items, res.Next, nil
	})
}

// ProcessInstanceJobsPage returns the jobs of one process instance whose id
// is above afterID (0 for the first page), by id, at most limit: the paged
// form of ProcessInstanceJobs.
//
// Deprecated: use [Engine.Instances] and [instance.Instances.Jobs].
func (e *Engine) ProcessInstanceJobsPage(ctx context.Context, processInstanceID string, afterID int64, limit int) ([]*rivertype.JobRow, error) {
	if err := checkInstanceID("process_instance_id", processInstanceID); err != nil {
		return nil, err
	}
	res, err := e.Instances().Jobs(ctx, &instance.JobsParams{ProcessInstanceID: processInstanceID, Limit: limit, After: listpage.ID(afterID)})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// ProcessInstanceTree returns the process instances under root, at most
// limit, in tree order.
//
// Deprecated: use [Engine.Instances] and [instance.Instances.Tree].
func (e *Engine) ProcessInstanceTree(ctx context.Context, root string, limit int) ([]*TreeMember, error) {
	if err := checkInstanceID("root_process_instance_id", root); err != nil {
		return nil, err
	}
	return e.Instances().Tree(ctx, &instance.TreeParams{Root: root, Limit: limit})
}

// ProcessInstanceStatus returns the status and progress of every job of a
// process instance, oldest first (at most MaxProcessInstanceJobs).
//
// Deprecated: use [Engine.Instances] and [instance.Instances.Status].
func (e *Engine) ProcessInstanceStatus(ctx context.Context, processInstanceID string) ([]*jobcontrol.JobStatus, error) {
	if err := checkInstanceID("process_instance_id", processInstanceID); err != nil {
		return nil, err
	}
	return e.Instances().Status(ctx, processInstanceID)
}

// SearchProcessInstances returns one page of the process instances that
// have a job matching f, each once, ordered by their newest matching job
// (oldest, with f.Oldest), with at most limit (1 to MaxPageSize), after the
// cursor (0 for the first page, then the page's Next, which is 0 on the
// last page).
//
// Deprecated: use [Engine.Instances] and [instance.Instances.List].
func (e *Engine) SearchProcessInstances(ctx context.Context, f *search.Filter, cursor int64, limit int) (*search.InstancePage, error) {
	if f == nil {
		f = &search.Filter{}
	}
	res, err := e.Instances().List(ctx, &instance.ListParams{Filter: *f, Limit: limit, After: listpage.ID(cursor)})
	if err != nil {
		return nil, err
	}
	page := &search.InstancePage{Instances: res.Items}
	if res.Next != "" {
		page.Next, _ = strconv.ParseInt(res.Next, 10, 64) // an id cursor the handle made
	}
	return page, nil
}
