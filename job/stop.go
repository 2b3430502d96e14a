package job

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// Stop asks job jobID to stop (the CNES REGARDS jobs module's stopJob),
// asynchronously (package jobcontrol): a job waiting to run is cancelled at
// once and never starts (ABORTED); a running job's context is cancelled by
// whichever client runs it, in any process, and the job ends ABORTED when
// its work returns (clients need the engine's Middleware); a finished job
// is left as it is, and the result says so. Asking again is harmless. An
// aborted job opens no incident. In River terms ABORTED is state cancelled
// with "cancel_attempted_at" in metadata. An unknown id gives an error
// naming it that wraps ErrNotFound.
func (j *Jobs) Stop(ctx context.Context, jobID int64) (*jobcontrol.StopResult, error) {
	results, err := jobcontrol.StopJobs(ctx, j.db, j.schema, []int64{jobID})
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("job: stopping job %d: %w", jobID, ErrNotFound)
	}
	return &results[0], nil
}

// StopProcessInstance asks every job of a process instance to stop, in one
// statement, as Stop does for one; it returns one result per job (none for
// an instance without jobs). An empty id is an error naming the field.
func (j *Jobs) StopProcessInstance(ctx context.Context, processInstanceID string) ([]jobcontrol.StopResult, error) {
	if processInstanceID == "" {
		return nil, errors.New("job: StopProcessInstance: process_instance_id is empty")
	}
	return jobcontrol.StopProcessInstance(ctx, j.db, j.schema, processInstanceID)
}
