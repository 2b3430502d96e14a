package suspension

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Change is one suspension or activation.
type Change struct {
	Type TargetType `json:"type"`
	ID   string     `json:"id"`
	// Suspend is true to suspend, false to activate.
	Suspend bool `json:"suspend"`
	// IncludeJobs also changes the target's existing unfinished jobs. A
	// process instance's jobs are always included.
	IncludeJobs bool `json:"include_jobs"`
}

// Result reports what Apply did.
type Result struct {
	// Changed is true when the target's state changed (false: already in it).
	Changed bool `json:"changed"`
	// JobDefinitions are the job definitions whose state the change
	// changed: the job definition itself, or a process definition's job
	// definitions that were not in the state asked for yet.
	JobDefinitions []string `json:"job_definitions,omitempty"`
	// StartTimerJobs is how many timer start event jobs of a process
	// definition (timer jobs of no process instance) were suspended or
	// activated with it. In Camunda they belong to the process definition,
	// so they follow it even without IncludeJobs.
	StartTimerJobs int64 `json:"start_timer_jobs,omitempty"`
	// Jobs, Batches, Stopped, Duration and LongestBatch describe the cascade
	// over existing jobs (see CascadeResult); zero without one.
	Jobs         int64         `json:"jobs"`
	Batches      int           `json:"batches"`
	Stopped      bool          `json:"stopped,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
	LongestBatch time.Duration `json:"longest_batch_ns"`
}

// Apply makes change c now: the target's own state (Set), then, with
// IncludeJobs (always for a process instance), its existing jobs (Cascade).
// A process definition's stored job definitions are changed with it, each
// in a transaction of its own (so an insert never waits on two of them),
// and so are its timer start event jobs (timer jobs of no process
// instance), with or without IncludeJobs, as in Camunda. Applying a change
// twice is harmless.
func Apply(ctx context.Context, db DB, schema string, c Change) (*Result, error) {
	if err := c.Type.Validate(); err != nil {
		return nil, err
	}
	if c.ID == "" {
		return nil, fmt.Errorf("suspension: the id of the %s to %s is empty", c.Type, verbBare(c.Suspend))
	}
	res := &Result{}
	if c.Type == ProcessDefinition {
		ids, err := JobDefinitionsOf(ctx, db, schema, c.ID)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			changed, err := Set(ctx, db, schema, JobDefinition, id, c.Suspend)
			if err != nil {
				return res, err
			}
			res.Changed = res.Changed || changed
			if changed {
				res.JobDefinitions = append(res.JobDefinitions, id)
			}
		}
	}
	changed, err := Set(ctx, db, schema, c.Type, c.ID, c.Suspend)
	if err != nil {
		return res, err
	}
	res.Changed = res.Changed || changed
	if changed && c.Type == JobDefinition {
		res.JobDefinitions = []string{c.ID}
	}
	if c.Type == ProcessDefinition && !c.IncludeJobs {
		timers, err := cascade(ctx, db, schema, startTimers, ProcessDefinition, c.ID, c.Suspend, BatchSize)
		if timers != nil {
			res.StartTimerJobs = timers.Jobs
		}
		if err != nil {
			return res, err
		}
	}
	if c.IncludeJobs || c.Type == ProcessInstance {
		cascade, err := Cascade(ctx, db, schema, c.Type, c.ID, c.Suspend, BatchSize)
		if cascade != nil {
			res.Jobs, res.Batches, res.Stopped = cascade.Jobs, cascade.Batches, cascade.Stopped
			res.Duration, res.LongestBatch = cascade.Duration, cascade.LongestBatch
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func verbBare(suspend bool) string {
	if suspend {
		return "suspend"
	}
	return "activate"
}

var (
	scheduleInsertSQL = mustReadSQL("schedule_insert.sql")
	scheduleDueSQL    = mustReadSQL("schedule_due.sql")
	scheduleNextSQL   = mustReadSQL("schedule_next.sql")
	scheduleDoneSQL   = mustReadSQL("schedule_done.sql")
	scheduleListSQL   = mustReadSQL("schedule_list.sql")
)

// Scheduled is a change due later.
type Scheduled struct {
	ID     int64     `json:"id"`
	Change Change    `json:"change"`
	DueAt  time.Time `json:"due_at"`
	// LastError is the error of the last attempt to apply it, if any.
	LastError string `json:"last_error,omitempty"`
}

// Schedule stores change c to be applied at at by Service (on River's
// elected leader). Only job definitions and process definitions can be
// scheduled. It returns the schedule's id.
func Schedule(ctx context.Context, db DB, schema string, c Change, at time.Time) (int64, error) {
	if c.Type != JobDefinition && c.Type != ProcessDefinition {
		return 0, fmt.Errorf("suspension: only job definitions and process definitions can be suspended or activated later, not %s %q", c.Type, c.ID)
	}
	var id int64
	if err := db.QueryRow(ctx, render(scheduleInsertSQL, schema), string(c.Type), c.ID, c.Suspend, c.IncludeJobs, at).Scan(&id); err != nil {
		return 0, fmt.Errorf("suspension: scheduling to %s %s %q at %s: %w", verbBare(c.Suspend), c.Type, c.ID, at.UTC().Format(time.RFC3339Nano), err)
	}
	return id, nil
}

// Pending returns the scheduled changes not yet applied (at most limit), in
// due order.
func Pending(ctx context.Context, db DB, schema string, limit int) ([]Scheduled, error) {
	return pendingAfter(ctx, db, schema, nil, limit)
}

// pendingAfter returns the scheduled changes not yet applied after after
// (nil: from the first), in due order, at most limit.
func pendingAfter(ctx context.Context, db DB, schema string, after *Scheduled, limit int) ([]Scheduled, error) {
	var due *time.Time
	var id int64
	if after != nil {
		due, id = &after.DueAt, after.ID
	}
	rows, err := db.Query(ctx, render(scheduleListSQL, schema), limit, due, id)
	if err != nil {
		return nil, fmt.Errorf("suspension: listing scheduled changes: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Scheduled, error) {
		var (
			s         Scheduled
			lastError *string
		)
		err := row.Scan(&s.ID, &s.Change.Type, &s.Change.ID, &s.Change.Suspend, &s.Change.IncludeJobs, &s.DueAt, &lastError)
		s.DueAt = s.DueAt.UTC()
		if lastError != nil {
			s.LastError = *lastError
		}
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("suspension: listing scheduled changes: %w", err)
	}
	return list, nil
}

// ApplyDue applies every scheduled change that is due, oldest first, and
// records each as applied by clientID (or its error; a failed change is
// tried again next time). It returns how many it applied and when the next
// change is due (zero when none is scheduled).
func ApplyDue(ctx context.Context, db DB, schema, clientID string) (applied int, next time.Time, err error) {
	const perRound = 100
	for {
		rows, err := db.Query(ctx, render(scheduleDueSQL, schema), perRound)
		if err != nil {
			return applied, next, fmt.Errorf("suspension: reading due changes: %w", err)
		}
		var due []Scheduled
		due, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Scheduled, error) {
			var (
				s       Scheduled
				nextDue *time.Time
			)
			err := row.Scan(&s.ID, &s.Change.Type, &s.Change.ID, &s.Change.Suspend, &s.Change.IncludeJobs, &s.DueAt, &nextDue)
			return s, err
		})
		if err != nil {
			return applied, next, fmt.Errorf("suspension: reading due changes: %w", err)
		}
		var firstErr error
		for _, s := range due {
			res, applyErr := Apply(ctx, db, schema, s.Change)
			var jobs int64
			var errText *string
			if res != nil {
				jobs = res.Jobs
			}
			if applyErr != nil {
				text := applyErr.Error()
				errText = &text
				firstErr = errors.Join(firstErr, applyErr)
			} else {
				applied++
			}
			if _, err := db.Exec(ctx, render(scheduleDoneSQL, schema), s.ID, clientID, jobs, errText); err != nil {
				return applied, next, fmt.Errorf("suspension: recording scheduled change %d: %w", s.ID, err)
			}
		}
		if firstErr != nil {
			return applied, next, firstErr
		}
		if len(due) < perRound {
			break
		}
	}
	var nextDue *time.Time
	if err := db.QueryRow(ctx, render(scheduleNextSQL, schema)).Scan(&nextDue); err != nil {
		return applied, next, fmt.Errorf("suspension: reading the next due change: %w", err)
	}
	if nextDue != nil {
		next = *nextDue
	}
	return applied, next, nil
}

var scheduleGetSQL = mustReadSQL("schedule_get.sql")

// ErrScheduleNotFound is wrapped by ApplyScheduled's error for an unknown
// schedule id.
var ErrScheduleNotFound = errors.New("suspension: no such scheduled change")

// ErrScheduleApplied is wrapped by ApplyScheduled's error for a scheduled
// change applied already.
var ErrScheduleApplied = errors.New("suspension: the scheduled change was applied already")

// ApplyScheduled applies scheduled change id now, before it is due, and
// records it as applied by by, so that Service does not apply it again:
// what Camunda does when the job of a delayed suspension is executed by
// hand (managementService.executeJob on its timer job). The change is
// applied as when due (Apply); its row stays locked meanwhile, so a second
// ApplyScheduled of it waits and then finds it applied. (Service, on the
// leader, may apply it at the same time if it is due; applying twice is
// harmless.)
func ApplyScheduled(ctx context.Context, db DB, schema string, id int64, by string) (*Scheduled, *Result, error) {
	var (
		s       = Scheduled{ID: id}
		applied *time.Time
		res     *Result
	)
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, render(scheduleGetSQL, schema), id).Scan(&s.Change.Type, &s.Change.ID, &s.Change.Suspend, &s.Change.IncludeJobs, &s.DueAt, &applied)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %d", ErrScheduleNotFound, id)
		}
		if err != nil {
			return err
		}
		s.DueAt = s.DueAt.UTC()
		if applied != nil {
			return fmt.Errorf("%w: change %d at %s", ErrScheduleApplied, id, applied.UTC().Format(time.RFC3339Nano))
		}
		// Applied on the pool (its own transactions, as when due); the
		// schedule row stays locked by tx until it is recorded.
		var applyErr error
		res, applyErr = Apply(ctx, db, schema, s.Change)
		var (
			jobs    int64
			errText *string
		)
		if res != nil {
			jobs = res.Jobs
		}
		if applyErr != nil {
			text := applyErr.Error()
			errText = &text
		}
		if _, err := tx.Exec(ctx, render(scheduleDoneSQL, schema), id, by, jobs, errText); err != nil {
			return errors.Join(applyErr, err)
		}
		if applyErr != nil {
			// Record the error, as the service does, and report it.
			if err := tx.Commit(ctx); err != nil {
				return errors.Join(applyErr, err)
			}
			return applyErr
		}
		return nil
	})
	if err != nil {
		return &s, res, fmt.Errorf("suspension: applying scheduled change %d: %w", id, err)
	}
	return &s, res, nil
}
