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
	// ParentProcessInstanceID is the instance that called this one, as its
	// jobs' contexts name it (JobContext.ParentProcessInstanceID); empty for
	// the root, and for an instance whose jobs name no parent (it is then
	// shown under the root).
	ParentProcessInstanceID string
	// Depth is the member's distance from the root in the tree as returned:
	// 0 for the root, 1 for what it called (or what names no parent), and so
	// on.
	Depth         int
	Unfinished    int64
	Failed        int64
	OpenIncidents int64
	// SubtreeOpenIncidents is OpenIncidents summed over the member and every
	// instance under it: a called instance's incident shows on its parent
	// and its root.
	SubtreeOpenIncidents int64
}

// ProcessInstanceTree returns the process instances under root (those whose
// jobs name it as their RootProcessInstanceID, root itself included), at
// most limit (1 to MaxPageSize, taken by id): the call hierarchy of a root,
// in tree order (each instance followed by the instances it called, by
// id), with each member's open incidents and those of its subtree, so that
// a called instance's incident shows on its parent and root.
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
		if err := rows.Scan(&m.ProcessInstanceID, &m.ParentProcessInstanceID, &m.Unfinished, &m.Failed, &m.OpenIncidents); err != nil {
			return nil, fmt.Errorf("workflow: reading the tree of process instance %q: %w", root, err)
		}
		members = append(members, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workflow: reading the tree of process instance %q: %w", root, err)
	}
	return treeOrder(root, members), nil
}

// treeOrder arranges members (by id) as the tree under root: depth first,
// children by id. A member whose parent is not among them (its jobs name
// none, or the parent's jobs are gone or past the limit) hangs under the
// root; a cycle in the recorded parents (data written by hand) is broken the
// same way, so every member is returned exactly once. It fills Depth and
// SubtreeOpenIncidents.
func treeOrder(root string, members []*TreeMember) []*TreeMember {
	byID := make(map[string]*TreeMember, len(members))
	for _, m := range members {
		byID[m.ProcessInstanceID] = m
	}
	children := map[string][]*TreeMember{}
	var tops []*TreeMember
	for _, m := range members {
		switch {
		case m.ProcessInstanceID == root:
			tops = append([]*TreeMember{m}, tops...)
		case m.ParentProcessInstanceID != "" && m.ParentProcessInstanceID != m.ProcessInstanceID && byID[m.ParentProcessInstanceID] != nil:
			children[m.ParentProcessInstanceID] = append(children[m.ParentProcessInstanceID], m)
		default:
			if byID[root] != nil {
				children[root] = append(children[root], m)
			} else {
				tops = append(tops, m)
			}
		}
	}
	ordered := make([]*TreeMember, 0, len(members))
	seen := make(map[*TreeMember]bool, len(members))
	var walk func(m *TreeMember, depth int) int64
	walk = func(m *TreeMember, depth int) int64 {
		seen[m] = true
		m.Depth = depth
		ordered = append(ordered, m)
		m.SubtreeOpenIncidents = m.OpenIncidents
		for _, c := range children[m.ProcessInstanceID] {
			if !seen[c] {
				m.SubtreeOpenIncidents += walk(c, depth+1)
			}
		}
		return m.SubtreeOpenIncidents
	}
	for _, m := range tops {
		walk(m, 0)
	}
	// Members only reachable through a cycle of recorded parents.
	for _, m := range members {
		if !seen[m] {
			if r := byID[root]; r != nil {
				r.SubtreeOpenIncidents += walk(m, 1)
			} else {
				walk(m, 0)
			}
		}
	}
	return ordered
}
