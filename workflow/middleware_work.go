package workflow

import (
	"context"

	"github.com/riverqueue/river/rivertype"
)

var _ rivertype.WorkerMiddleware = (*middleware)(nil)

// Work runs on the work path of every job a client with the engine's
// middleware works. The exclusive hook is outermost, so that a job's key is
// given back last, after the retry bookkeeping, as soon as the work returns
// (see workExclusive and workWithRetryBookkeeping).
func (m *middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return m.engine.workExclusive(ctx, job, func(ctx context.Context) error {
		return m.engine.workUnlessExpired(ctx, job, func(ctx context.Context) error {
			return m.engine.workWithRetryBookkeeping(ctx, job, doInner)
		})
	})
}
