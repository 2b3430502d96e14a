package workflow

import (
	"context"

	"github.com/riverqueue/river/rivertype"
)

var _ rivertype.WorkerMiddleware = (*middleware)(nil)

// Work runs on the work path of every job a client with the engine's
// middleware works. It gives a job's exclusive key back as soon as the job's
// work returns (see workExclusive).
func (m *middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return m.engine.workExclusive(ctx, job, doInner)
}
