// Package queue manages River's queues as an operator sees them: List pages
// through River's queues and the queues with unfinished jobs River has no
// record of (with their jobs by state and whether a client works each),
// Get reads River's record of one queue, and Pause and Resume pause and
// resume one with River's own QueuePause and QueueResume.
package queue

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/overview"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var getSQL = sqltemplate.MustRead(sqlFS, "sql/get.sql")

// ReportInterval is how often a River client working a queue reports it in
// River's river_queue table (River's producer does it when it starts and
// every 10 minutes).
const ReportInterval = 10 * time.Minute

// WorkedWithin is how recent a queue's report must be for a client to be
// taken as working it: two report intervals and a minute.
const WorkedWithin = 2*ReportInterval + time.Minute

// MaxNameBytes is the longest queue name River takes, and so the longest
// List cursor.
const MaxNameBytes = 128

// DB is what the handle needs of a database: a pgxpool.Pool, a pgx.Conn or
// a pgx.Tx.
type DB interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Config configures a Queues handle.
type Config struct {
	// DB is the database.
	DB DB
	// Schema is the schema of River's tables; empty means the search_path.
	Schema string
	// Control pauses (pause true) or resumes a queue with River's own
	// Client.QueuePause and QueueResume, which notify the clients working
	// it: the engine passes one on an insert-only client of its own.
	Control func(ctx context.Context, queue string, pause bool) error
}

// Queues is the handle on a schema's queues.
type Queues struct {
	db      DB
	schema  string
	control func(ctx context.Context, queue string, pause bool) error
}

// New returns the handle on the queues of config.Schema in config.DB.
func New(config Config) *Queues {
	return &Queues{db: config.DB, schema: config.Schema, control: config.Control}
}

// State is what River's record of a queue says about who works it.
type State struct {
	Name string `json:"name"`
	// Recorded is false when River has no record of the queue (no client
	// has worked it, or none for River's queue retention); ReportedAt is
	// its last report by a client.
	Recorded   bool      `json:"recorded"`
	ReportedAt time.Time `json:"reported_at,omitzero"`
	// Worked is true when a client reported working the queue within
	// WorkedWithin (by the database's clock).
	Worked bool `json:"worked"`
	// Paused is true when the queue is paused (River's QueuePause).
	Paused bool `json:"paused"`
}

// ListParams selects a page of queues, by name: at most Limit (0: 100; at
// most 1000), after the cursor After ("" for the first page, then the Next
// of the previous page).
type ListParams struct {
	Limit int    `json:"limit,omitempty"`
	After string `json:"after,omitempty"`
}

// ListResult is a page of queues; Next is the cursor of the next page, ""
// when there is none.
type ListResult struct {
	Items []*overview.Queue `json:"items"`
	Next  string            `json:"next,omitempty"`
}

// List returns one page of River's queues and of the queues with
// unfinished jobs River has no record of, by name, with their unfinished
// jobs and whether a client works each (a report within WorkedWithin). A
// bad Limit or After is an error naming the field and the value.
func (q *Queues) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("queue", params.Limit)
	if err != nil {
		return nil, err
	}
	if len(params.After) > MaxNameBytes {
		return nil, fmt.Errorf("queue: ListParams.After %q is not a cursor of this listing (a queue name, at most %d bytes, as ListResult.Next gives)", params.After, MaxNameBytes)
	}
	all, err := overview.Queues(ctx, q.db, q.schema, WorkedWithin)
	if err != nil {
		return nil, err
	}
	var page []*overview.Queue
	for _, x := range all {
		if x.Name > params.After {
			page = append(page, x)
		}
	}
	slices.SortFunc(page, func(a, b *overview.Queue) int { return strings.Compare(a.Name, b.Name) })
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(page, limit, func(x *overview.Queue) string { return x.Name })
	return res, nil
}

// Get reads River's record of queue: whether a client reported working it
// recently, and whether it is paused. A queue River has no record of is
// returned with Recorded false.
func (q *Queues) Get(ctx context.Context, queue string) (*State, error) {
	var (
		updated, now time.Time
		paused       *time.Time
	)
	err := q.db.QueryRow(ctx, sqltemplate.Render(getSQL, q.schema), queue).Scan(&updated, &paused, &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return &State{Name: queue}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue: reading queue %q: %w", queue, err)
	}
	updated = updated.UTC()
	return &State{Name: queue, Recorded: true, ReportedAt: updated, Worked: now.Sub(updated) <= WorkedWithin, Paused: paused != nil}, nil
}

// Pause pauses queue with River's Client.QueuePause: River's clients stop
// fetching from it (those listening at once, the others at their next poll
// of the queue's settings). Resume undoes it. An empty queue name is an
// error.
func (q *Queues) Pause(ctx context.Context, queue string) error { return q.change(ctx, queue, true) }

// Resume resumes a paused queue with River's Client.QueueResume.
func (q *Queues) Resume(ctx context.Context, queue string) error {
	return q.change(ctx, queue, false)
}

func (q *Queues) change(ctx context.Context, queue string, pause bool) error {
	if queue == "" {
		return errors.New("queue: the queue name is empty")
	}
	if q.control == nil {
		return errors.New("queue: this handle has no Config.Control to pause and resume queues with")
	}
	if err := q.control(ctx, queue, pause); err != nil {
		return fmt.Errorf("queue: queue %q: %w", queue, err)
	}
	return nil
}
