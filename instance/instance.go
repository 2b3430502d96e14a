// Package instance looks at process instances the way Camunda Cockpit
// does: List pages through the instances that have jobs a search.Filter
// selects, Jobs pages through one instance's jobs in every state (the first
// thing to look at when an instance seems stuck), Tree shows a root's call
// hierarchy with the open incidents of each subtree, and Status reads the
// status and progress of an instance's jobs (package jobcontrol).
package instance

import (
	"context"
	"embed"
	"fmt"
	"strconv"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/jobrow"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/jobcontrol"
	"github.com/riverbpmn/riverbpmn/search"
)

//go:embed sql/*.sql
var sqlFS embed.FS

func mustSQL(name string) string { return sqltemplate.MustRead(sqlFS, "sql/"+name) }

var (
	jobsSQL = mustSQL("jobs.sql")
	treeSQL = mustSQL("tree.sql")
)

// MaxIDBytes is the longest process instance id (the limit of a job
// context's fields).
const MaxIDBytes = 255

// MaxStatusJobs caps how many jobs Status returns.
const MaxStatusJobs = 10_000

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx (where Begin makes a savepoint).
type DB interface {
	jobcontrol.DB
	search.Querier
}

// Config configures an Instances handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
}

// Instances is the handle on a schema's process instances.
type Instances struct {
	db     DB
	schema string
}

// New returns the handle on the process instances of config.Schema in
// config.DB.
func New(config Config) *Instances {
	return &Instances{db: config.DB, schema: config.Schema}
}

// ListParams selects a page of process instances: those with a job Filter
// selects, each once on a page, ordered by their newest matching job
// (oldest, with Filter.Oldest), at most Limit (0: 100; at most 1000), after
// the cursor After ("" for the first page, then the Next of the previous
// page).
type ListParams struct {
	search.Filter
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
}

// ListResult is a page of process instances; Next is the cursor of the
// next page, "" when there is none.
type ListResult struct {
	Items []*search.Instance `json:"items"`
	Next  string             `json:"next,omitempty"`
}

// List returns one page of the process instances params selects (nil: the
// 100 with the newest jobs). A page walks a bounded window of matching jobs
// (search.InstanceWindow per instance asked): an instance whose matching
// jobs are far apart can appear again on a later page. A bad filter, Limit
// or After is an error naming the field and the value.
func (i *Instances) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("instance", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("instance", params.After)
	if err != nil {
		return nil, err
	}
	page, err := search.InstancesPage(ctx, i.db, i.schema, &params.Filter, after, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(page.Instances, limit, func(in *search.Instance) string { return listpage.ID(in.JobID) })
	if res.Next == "" && page.Next != 0 {
		// The page walked its whole window of jobs: more may follow.
		res.Next = listpage.ID(page.Next)
	}
	return res, nil
}

// JobsParams selects a page of one process instance's jobs in every state,
// by id (oldest first): at most Limit (0: 100; at most 1000), after the
// cursor After.
type JobsParams struct {
	ProcessInstanceID string `json:"process_instance_id"`
	Limit             int    `json:"limit,omitempty"`
	After             string `json:"after,omitempty"`
}

// JobsResult is a page of a process instance's jobs; Next is the cursor of
// the next page, "" when there is none.
type JobsResult struct {
	Items []*rivertype.JobRow `json:"items"`
	Next  string              `json:"next,omitempty"`
}

// Jobs returns one page of the jobs of params.ProcessInstanceID. A page
// costs the same on the first page as on the last, however many jobs the
// instance has. A job whose attempt errors cannot be decoded is still
// listed, with Errors empty: this call is for looking, not for working the
// job. An empty or too long instance id, a bad Limit or After is an error
// naming the field and the value.
func (i *Instances) Jobs(ctx context.Context, params *JobsParams) (*JobsResult, error) {
	if params == nil {
		params = &JobsParams{}
	}
	if err := checkID("JobsParams.ProcessInstanceID", params.ProcessInstanceID); err != nil {
		return nil, err
	}
	limit, err := listpage.Limit("instance", params.Limit)
	if err != nil {
		return nil, err
	}
	after, err := listpage.ParseID("instance", params.After)
	if err != nil {
		return nil, err
	}
	rows, err := i.db.Query(ctx, JobsStatement(i.schema), params.ProcessInstanceID, after, listpage.Fetch(limit))
	if err != nil {
		return nil, fmt.Errorf("instance: listing jobs of process instance %q: %w", params.ProcessInstanceID, err)
	}
	jobs, _, err := jobrow.ScanRows(rows)
	if err != nil {
		return nil, fmt.Errorf("instance: listing jobs of process instance %q: %w", params.ProcessInstanceID, err)
	}
	res := &JobsResult{}
	res.Items, res.Next = listpage.Trim(jobs, limit, func(j *rivertype.JobRow) string { return listpage.ID(j.ID) })
	return res, nil
}

// JobsStatement is the statement Jobs runs in schema, with its parameters
// the process instance id, the job id after which the page starts (0 for
// the first) and the rows asked (one more than the page shows): for
// EXPLAIN.
func JobsStatement(schema string) string {
	return sqltemplate.Render(jobsSQL, schema, jobrow.ColumnsMarker, jobrow.QualifiedColumns("river_job"))
}

// TreeMember is a process instance of a call hierarchy, with its
// unfinished and failed jobs and its open incidents.
type TreeMember struct {
	ProcessInstanceID string `json:"process_instance_id"`
	// ParentProcessInstanceID is the instance that called this one, as its
	// jobs' contexts name it (the job context's parent process instance);
	// empty for the root, and for an instance whose jobs name no parent (it
	// is then shown under the root).
	ParentProcessInstanceID string `json:"parent_process_instance_id,omitempty"`
	// Depth is the member's distance from the root in the tree as returned:
	// 0 for the root, 1 for what it called (or what names no parent), and so
	// on.
	Depth         int   `json:"depth"`
	Unfinished    int64 `json:"unfinished"`
	Failed        int64 `json:"failed"`
	OpenIncidents int64 `json:"open_incidents"`
	// SubtreeOpenIncidents is OpenIncidents summed over the member and every
	// instance under it: a called instance's incident shows on its parent
	// and its root.
	SubtreeOpenIncidents int64 `json:"subtree_open_incidents"`
}

// TreeParams selects a call hierarchy: the process instances whose jobs
// name Root as their root process instance (Root itself included), at most
// Limit of them (0: 100; at most 1000), taken by id.
type TreeParams struct {
	Root  string `json:"root"`
	Limit int    `json:"limit,omitempty"`
}

// Tree returns the call hierarchy params selects, in tree order (each
// instance followed by the instances it called, by id), with each member's
// open incidents and those of its subtree, so that a called instance's
// incident shows on its parent and root. An empty or too long root, or a
// bad Limit, is an error naming the field and the value.
func (i *Instances) Tree(ctx context.Context, params *TreeParams) ([]*TreeMember, error) {
	if params == nil {
		params = &TreeParams{}
	}
	if err := checkID("TreeParams.Root", params.Root); err != nil {
		return nil, err
	}
	limit, err := listpage.Limit("instance", params.Limit)
	if err != nil {
		return nil, err
	}
	root := params.Root
	rows, err := i.db.Query(ctx, sqltemplate.Render(treeSQL, i.schema), root, limit)
	if err != nil {
		return nil, fmt.Errorf("instance: reading the tree of process instance %q: %w", root, err)
	}
	defer rows.Close()
	var members []*TreeMember
	for rows.Next() {
		m := &TreeMember{}
		if err := rows.Scan(&m.ProcessInstanceID, &m.ParentProcessInstanceID, &m.Unfinished, &m.Failed, &m.OpenIncidents); err != nil {
			return nil, fmt.Errorf("instance: reading the tree of process instance %q: %w", root, err)
		}
		members = append(members, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("instance: reading the tree of process instance %q: %w", root, err)
	}
	return treeOrder(root, members), nil
}

// Status returns the status and progress of every job of a process
// instance, oldest first (at most MaxStatusJobs). An empty or too long id
// is an error naming it.
func (i *Instances) Status(ctx context.Context, processInstanceID string) ([]*jobcontrol.JobStatus, error) {
	if err := checkID("process instance id", processInstanceID); err != nil {
		return nil, err
	}
	return jobcontrol.ProcessInstanceStatus(ctx, i.db, i.schema, processInstanceID, MaxStatusJobs)
}

// checkID refuses an empty or too long process instance id, naming field.
func checkID(field, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("instance: %s is required and must not be empty", field)
	case len(id) > MaxIDBytes:
		return fmt.Errorf("instance: %s %s is %d bytes, more than %d", field, strconv.Quote(id[:32]+"..."), len(id), MaxIDBytes)
	}
	return nil
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
