package handlers

import (
	"context"
	"errors"

	"github.com/riverbpmn/riverbpmn/jobcontrol"
)

// ProgressReporter reports a running job's progress: SetTotal declares the
// completion count, Advance and Set move it. Calls only touch memory; the
// value is written to the job's metadata (key jobcontrol.ProgressMetadataKey,
// shown by River UI) at most once per Config.JobControl.ProgressInterval of
// the engine (one second by default) and once when the work returns. Read it back with
// Engine.JobStatus, Engine.ProcessInstanceStatus or `riverbpmn progress`.
//
// Reporting progress does not keep a job alive: River cancels the context
// of every job that runs longer than its timeout, river.Config.JobTimeout,
// one minute by default. Work that honours its context then returns
// context.DeadlineExceeded, and the job fails that attempt (its retry cycle
// decides what follows) with the progress it had reported. A job expected to
// run longer says so on its worker, with River's Timeout method (a negative
// duration: no timeout):
//
//	func (w *ImportWorker) Timeout(*river.Job[ImportArgs]) time.Duration { return 2 * time.Hour }
//
// or the client raises JobTimeout for all its jobs. `riverbpmn progress`
// points at this when a job's last attempt ended with "context deadline
// exceeded".
type ProgressReporter = jobcontrol.Reporter

// ErrNoProgress is returned by Progress when the job runs on a client without
// the engine's middleware.
var ErrNoProgress = errors.New("handlers: no progress reporter in the job's context; add the engine's Middleware (workflow.Engine.Middleware) to river.Config.Middleware")

// Progress returns the progress reporter of the job whose Work received ctx:
//
//	func (w *ImportWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
//		progress, err := handlers.Progress(ctx)
//		if err != nil {
//			return err
//		}
//		progress.SetTotal(int64(len(job.Args.Files)))
//		for _, f := range job.Args.Files {
//			if err := importFile(ctx, f); err != nil {
//				return err
//			}
//			progress.Advance(1)
//		}
//		return nil
//	}
func Progress(ctx context.Context) (*ProgressReporter, error) {
	if r := jobcontrol.ReporterFrom(ctx); r != nil {
		return r, nil
	}
	return nil, ErrNoProgress
}
