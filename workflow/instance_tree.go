package workflow

import (
	"context"
	"fmt"
)

var processInstanceTreeSQL = mustReadSQL("process_instance_tree.sql")

// TreeMember is a process instance of a call hierarchy, with its
// unfinished and failed jobs and its open incidents.
type TreeMember struct {
	ProcessInstanceID string
	Unfinished        int64
	Failed            int64
	OpenIncidents     int64
}

// ProcessInstanceTree returns the process instances under root (those whose
// jobs name it as their RootProcessInstanceID, root itself included), by
// id, at most limit (1 to MaxPageSize): the call hierarchy of a root, with
// each member's open incidents, so that a called instance's incident shows
// on its root.
func (e *Engine) ProcessInstanceTree(ctx context.Context, root string, limit int) ([]*TreeMember, error) {
	if problem := identifierProblem(root, true); problem != "" {
		return nil, &JobContextError{Field: "root_process_instance_id", Value: root, Problem: problem}
	}
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	if e.dbPool == nil {
		return nil, errNoPool
	}
	rows, err := e.dbPool.Query(ctx, e.sql(processInstanceTreeSQL), root, limit)
	if err != nil {
		return nil, fmt.Errorf("workflow: reading the tree of process instance %q: %w", root, err)
	}
	defer rows.Close()
	var members []*TreeMember
	for rows.Next() {
		m := &TreeMember{}
		if err := rows.Scan(&m.ProcessInstanceID, &m.Unfinished, &m.Failed, &m.OpenIncidents); err != nil {
			return nil, fmt.Errorf("workflow: reading the tree of process instance %q: %w", root, err)
		}
		members = append(members, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workflow: reading the tree of process instance %q: %w", root, err)
	}
	return members, nil
}
