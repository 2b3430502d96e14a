package jobcontrol

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverqueue/river/rivertype"
)

// Status is a job's REGARDS status, derived from its River state.
type Status string

// Job statuses.
const (
	// Queued: waiting to run (available, scheduled, retryable).
	Queued Status = "QUEUED"
	// Pending: held, never fetched until released (River's pending).
	Pending   Status = "PENDING"
	Running   Status = "RUNNING"
	Succeeded Status = "SUCCEEDED"
	// Failed: discarded, or cancelled by its own work.
	Failed Status = "FAILED"
	// Aborted: cancelled after a stop request.
	Aborted Status = "ABORTED"
)

// StatusOf maps a River state and whether the job carries the stop marker to
// a status.
func StatusOf(state rivertype.JobState, stopRequested bool) Status {
	switch state {
	case rivertype.JobStateRunning:
		return Running
	case rivertype.JobStateCompleted:
		return Succeeded
	case rivertype.JobStateDiscarded:
		return Failed
	case rivertype.JobStateCancelled:
		if stopRequested {
			return Aborted
		}
		return Failed
	case rivertype.JobStatePending:
		return Pending
	default:
		return Queued
	}
}

// JobStatus is a job's status and progress.
type JobStatus struct {
	JobID             int64  `json:"job_id"`
	Kind              string `json:"kind"`
	ProcessInstanceID string `json:"process_instance_id,omitempty"`
	// State is the River state; Status the REGARDS status.
	State   string `json:"state"`
	Status  Status `json:"status"`
	Attempt int    `json:"attempt"`
	// StopRequested says a stop was asked for the job.
	StopRequested bool `json:"stop_requested"`
	// Progress is the last progress written, nil if the job reported none.
	Progress *Progress `json:"progress,omitempty"`
}

var (
	jobStatusSQL      = sqltemplate.MustRead(sqlFS, "sql/job_status.sql")
	instanceStatusSQL = sqltemplate.MustRead(sqlFS, "sql/instance_status.sql")
)

// GetJobStatus returns one job's status and progress, or an error wrapping
// ErrNotFound.
func GetJobStatus(ctx context.Context, db DB, schema string, jobID int64) (*JobStatus, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(jobStatusSQL, schema), jobID)
	if err != nil {
		return nil, fmt.Errorf("jobcontrol: reading job %d: %w", jobID, err)
	}
	statuses, err := scanStatuses(rows)
	if err != nil {
		return nil, fmt.Errorf("jobcontrol: reading job %d: %w", jobID, err)
	}
	if len(statuses) == 0 {
		return nil, fmt.Errorf("job %d: %w", jobID, ErrNotFound)
	}
	return statuses[0], nil
}

// ProcessInstanceStatus returns the status and progress of every job of a
// process instance, oldest first, at most limit.
func ProcessInstanceStatus(ctx context.Context, db DB, schema, processInstanceID string, limit int) ([]*JobStatus, error) {
	rows, err := db.Query(ctx, sqltemplate.Render(instanceStatusSQL, schema), processInstanceID, limit)
	if err != nil {
		return nil, fmt.Errorf("jobcontrol: reading jobs of process instance %q: %w", processInstanceID, err)
	}
	statuses, err := scanStatuses(rows)
	if err != nil {
		return nil, fmt.Errorf("jobcontrol: reading jobs of process instance %q: %w", processInstanceID, err)
	}
	return statuses, nil
}

func scanStatuses(rows pgx.Rows) ([]*JobStatus, error) {
	defer rows.Close()
	var out []*JobStatus
	for rows.Next() {
		var (
			st       JobStatus
			attempt  int16
			progress []byte
			pi       *string
		)
		if err := rows.Scan(&st.JobID, &st.Kind, &st.State, &attempt, &st.StopRequested, &progress, &pi); err != nil {
			return nil, err
		}
		st.Attempt = int(attempt)
		st.Status = StatusOf(rivertype.JobState(st.State), st.StopRequested)
		if pi != nil {
			st.ProcessInstanceID = *pi
		}
		if len(progress) > 0 && string(progress) != "null" {
			var p Progress
			// A malformed value (someone edited the row) is shown as none.
			if err := json.Unmarshal(progress, &p); err == nil {
				st.Progress = &p
			}
		}
		out = append(out, &st)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
