package workflow

import (
	"context"

	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// workWithRetryBookkeeping works the job with Camunda's rule for conflict
// failures (retrypolicy.SnoozeConflicts): a conflict of a job with a retry
// cycle is recorded in the job's errors (retrypolicy.RecordConflict, in the
// engine's schema unless the client's says otherwise), counted by telemetry
// and turned into a River snooze for the cycle's interval.
func (e *Engine) workWithRetryBookkeeping(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return retrypolicy.SnoozeConflicts(ctx, job, contextRetryCycle, doInner, func(ctx context.Context, job *rivertype.JobRow, failure error) {
		retrypolicy.RecordConflict(ctx, e.dbPool, e.config.Schema, job, failure)
		e.tel.Conflict(ctx, job)
	})
}
