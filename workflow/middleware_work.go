package workflow

import (
	"context"

	"github.com/riverqueue/river/rivertype"
)

var _ rivertype.WorkerMiddleware = (*middleware)(nil)

// Work runs on the work path of every job a client with the engine's
// middleware works, in layers from the outside in:
//
//   - telemetry (telemetry.Instruments.Work): it measures the job's waits
//     and what River does with the outcome;
//   - liveness (workLiveness): the job's context is cancelled if the client
//     loses its liveness session (Config.Liveness);
//   - exclusivity (exclusive.Keeper.Work): the job's key is given back last, as soon
//     as the work returns;
//   - expiry (workUnlessExpired): an expired job ends discarded before any
//     user code runs;
//   - progress and stop (workControl): they see the outcome the retry
//     bookkeeping chose (a conflict's snooze needs no stop check);
//   - retry bookkeeping (workWithRetryBookkeeping), around the worker;
//   - follow-ups (workFollowUps): the jobs the work inserts start at once.
func (m *middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return m.engine.tel.Work(ctx, job, func(ctx context.Context) error { return m.work(ctx, job, doInner) })
}

// work is Work's layers under telemetry.
func (m *middleware) work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return m.engine.workLiveness(ctx, job, func(ctx context.Context) error {
		return m.engine.exclusive.Work(ctx, job, func(ctx context.Context) error {
			return m.engine.workUnlessExpired(ctx, job, func(ctx context.Context) error {
				return m.engine.workControl(ctx, job, func(ctx context.Context) error {
					return m.engine.workWithRetryBookkeeping(ctx, job, func(ctx context.Context) error {
						return m.engine.workFollowUps(ctx, doInner)
					})
				})
			})
		})
	})
}
