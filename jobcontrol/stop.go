package jobcontrol

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// StopOutcome says what a stop request did to one job.
type StopOutcome string

const (
	// StopAborted: the job was waiting to run; it is cancelled (ABORTED) and
	// never starts.
	StopAborted StopOutcome = "aborted"
	// StopRequested: the job is running; the client running it is told to
	// cancel its context, and it ends ABORTED when its work returns.
	StopRequested StopOutcome = "stop_requested"
	// StopAlreadyFinished: the job had finished (completed, discarded or
	// cancelled); it is left as it is.
	StopAlreadyFinished StopOutcome = "already_finished"
)

// StopResult is the outcome of a stop request for one job.
type StopResult struct {
	JobID int64 `json:"job_id"`
	// State is the job's River state when the stop was asked for.
	State   string      `json:"state"`
	Outcome StopOutcome `json:"outcome"`
}

var (
	stopSQL          = sqltemplate.MustRead(sqlFS, "sql/stop.sql")
	stopRequestedSQL = sqltemplate.MustRead(sqlFS, "sql/stop_requested.sql")
)

const (
	stopTargetJobs     = "id = ANY($1::bigint[])"
	stopTargetInstance = "/* TEMPLATE: schema */river_bpmn_ctx_has_instance(metadata, $1::text)"
)

// StopJobs asks the jobs ids to stop, in one statement (see the package
// documentation). It returns one result per job found, in id order; ids that
// name no job are absent. Asking again is harmless: a waiting job is already
// cancelled, a running one is notified again.
func StopJobs(ctx context.Context, db DB, schema string, ids []int64) ([]StopResult, error) {
	return stop(ctx, db, schema, stopTargetJobs, ids)
}

// StopProcessInstance asks every job of process instance processInstanceID
// to stop, in one statement; see StopJobs.
func StopProcessInstance(ctx context.Context, db DB, schema, processInstanceID string) ([]StopResult, error) {
	return stop(ctx, db, schema, stopTargetInstance, processInstanceID)
}

func stop(ctx context.Context, db DB, schema, target string, arg any) ([]StopResult, error) {
	channel := schema
	if channel == "" {
		if err := db.QueryRow(ctx, "SELECT current_schema()").Scan(&channel); err != nil {
			return nil, fmt.Errorf("jobcontrol: stopping jobs: %w", err)
		}
	}
	channel += ".river_control"
	sql := sqltemplate.Render(strings.Replace(stopSQL, "/* TARGET */", target, 1), schema)
	rows, err := db.Query(ctx, sql, arg, channel)
	if err != nil {
		return nil, fmt.Errorf("jobcontrol: stopping jobs: %w", err)
	}
	defer rows.Close()
	var results []StopResult
	for rows.Next() {
		var (
			res     StopResult
			changed bool
		)
		if err := rows.Scan(&res.JobID, &res.State, &changed); err != nil {
			return nil, fmt.Errorf("jobcontrol: stopping jobs: %w", err)
		}
		switch {
		case !changed:
			res.Outcome = StopAlreadyFinished
		case res.State == string(rivertype.JobStateRunning):
			res.Outcome = StopRequested
		default:
			res.Outcome = StopAborted
		}
		results = append(results, res)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobcontrol: stopping jobs: %w", err)
	}
	return results, nil
}

// stopCheckTimeout bounds the check WorkStop makes after a last attempt
// failed.
const stopCheckTimeout = 5 * time.Second

// ErrStopped is the error a job ends with when its stop reached it while its
// work returned no error.
var ErrStopped = errors.New("jobcontrol: job stopped on request")

// WorkStop runs doInner and makes a job whose stop reached it end ABORTED
// (River: cancelled, with the stop marker):
//
//   - when River cancelled the job's context because of a stop request
//     (rivertype.ErrJobCancelledRemotely), the job is cancelled whatever its
//     work returned, nil included;
//   - when the job's last attempt fails and a stop was asked for that did not
//     reach the work in time, the job is cancelled instead of discarded, so
//     it opens no incident (the marker is read only on this path).
//
// Everything else is left to River.
func WorkStop(ctx context.Context, db DB, schema string, job *rivertype.JobRow, doInner func(context.Context) error) error {
	err := doInner(ctx)
	if errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely) {
		if err == nil {
			err = ErrStopped
		}
		if !errors.Is(err, &rivertype.JobCancelError{}) {
			err = river.JobCancel(err)
		}
		return err
	}
	if err == nil || job.Attempt < job.MaxAttempts || db == nil {
		return err
	}
	var cancelErr *rivertype.JobCancelError
	var snoozeErr *rivertype.JobSnoozeError
	if errors.As(err, &cancelErr) || errors.As(err, &snoozeErr) {
		return err
	}
	checkCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopCheckTimeout)
	defer cancel()
	var requested bool
	if qerr := db.QueryRow(checkCtx, sqltemplate.Render(stopRequestedSQL, schema), job.ID).Scan(&requested); qerr == nil && requested {
		return river.JobCancel(err)
	}
	return err
}
