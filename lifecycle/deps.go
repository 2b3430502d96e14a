package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
)

// Prerequisite is one job another waits for.
type Prerequisite struct {
	JobID int64 `json:"job_id"`
	// State is the prerequisite's state; empty when it was deleted.
	State rivertype.JobState `json:"state,omitempty"`
	// DoneAt is when it completed (nil while it has not).
	DoneAt *time.Time `json:"done_at,omitempty"`
	// Blocked is "discarded" or "cancelled" when it ended so: the dependent
	// stays held until an operator retries it and it completes.
	Blocked string `json:"blocked,omitempty"`
}

// Progress is how far a job's prerequisites are.
type Progress struct {
	JobID int64              `json:"job_id"`
	State rivertype.JobState `json:"state"`
	// Reasons are what the job is held for (package hold), if anything.
	Reasons []hold.Reason `json:"reasons,omitempty"`
	// Done of Total prerequisites have completed.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Blocked counts prerequisites that ended discarded or cancelled.
	Blocked       int            `json:"blocked"`
	Prerequisites []Prerequisite `json:"prerequisites"`
	// Dependents is how many jobs wait (or waited) for this one, and
	// DependentsWaiting how many of those it has not released yet.
	Dependents        int `json:"dependents"`
	DependentsWaiting int `json:"dependents_waiting"`
}

// Dependencies returns the progress of job jobID's prerequisites, and how
// many jobs depend on it. A job that does not exist is a *NotFoundError.
func Dependencies(ctx context.Context, db hold.DB, schema string, jobID int64) (*Progress, error) {
	p := &Progress{JobID: jobID, Prerequisites: []Prerequisite{}}
	var metadata []byte
	err := db.QueryRow(ctx, hold.RenderSQL(jobStateSQL, schema), jobID).Scan(&p.State, &metadata)
	if err == pgx.ErrNoRows {
		return nil, &NotFoundError{IDs: []int64{jobID}}
	}
	if err != nil {
		return nil, fmt.Errorf("lifecycle: reading job %d: %w", jobID, err)
	}
	if state, err := hold.Of(metadata); err == nil && state != nil {
		p.Reasons = state.Reasons
	}
	rows, err := db.Query(ctx, hold.RenderSQL(prerequisitesSQL, schema), jobID)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: reading the prerequisites of job %d: %w", jobID, err)
	}
	p.Prerequisites, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Prerequisite, error) {
		var (
			pre     Prerequisite
			state   *string
			blocked *string
		)
		err := row.Scan(&pre.JobID, &state, &pre.DoneAt, &blocked)
		if state != nil {
			pre.State = rivertype.JobState(*state)
		}
		if blocked != nil {
			pre.Blocked = *blocked
		}
		return pre, err
	})
	if err != nil {
		return nil, fmt.Errorf("lifecycle: reading the prerequisites of job %d: %w", jobID, err)
	}
	for _, pre := range p.Prerequisites {
		p.Total++
		if pre.DoneAt != nil {
			p.Done++
		}
		if pre.Blocked != "" {
			p.Blocked++
		}
	}
	if err := db.QueryRow(ctx, hold.RenderSQL(dependentsSQL, schema), jobID).Scan(&p.Dependents, &p.DependentsWaiting); err != nil {
		return nil, fmt.Errorf("lifecycle: reading the dependents of job %d: %w", jobID, err)
	}
	return p, nil
}

// LinkBatch is how many prerequisites one call of Link links at most.
const LinkBatch = 1000

// Link links dependencies whose prerequisite was locked by another
// transaction when the dependent was inserted (the insert never waits for
// a lock): a prerequisite that completed meanwhile counts as done (and
// releases the dependents it was the last of), another gets the
// DependentsKey mark, so that its completion releases them. The lifecycle
// Service calls it on the leader; it returns how many dependencies it
// linked.
func Link(ctx context.Context, db hold.DB, schema string) (int, error) {
	var n int
	if err := db.QueryRow(ctx, hold.RenderSQL(linkSQL, schema), LinkBatch).Scan(&n); err != nil {
		return 0, fmt.Errorf("lifecycle: linking dependencies: %w", err)
	}
	return n, nil
}
