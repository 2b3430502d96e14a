package workflow

import (
	"context"

	"github.com/riverqueue/river/rivertype"
)

var _ rivertype.WorkerMiddleware = (*middleware)(nil)

// Work runs a job through the engine's work path (River calls it for every
// job a client works when the engine's middleware is in river.Config).
func (m *middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return m.engine.workWithRetryBookkeeping(ctx, job, doInner)
}
