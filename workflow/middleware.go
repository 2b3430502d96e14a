package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// insertMiddleware attaches, validates and normalises job contexts. River runs
// global job insert middleware for all six insert calls (Insert, InsertTx,
// InsertMany, InsertManyTx, InsertManyFast, InsertManyFastTx) before anything
// is written, so an error here means nothing of the batch is inserted.
type insertMiddleware struct {
	river.MiddlewareDefaults

	engine *Engine
}

var _ rivertype.JobInsertMiddleware = (*insertMiddleware)(nil)

// InsertMany prepares every job of the batch, then inserts.
func (m *insertMiddleware) InsertMany(
	ctx context.Context,
	manyParams []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error),
) ([]*rivertype.JobInsertResult, error) {
	for i, params := range manyParams {
		if err := m.engine.prepareInsert(params); err != nil {
			if len(manyParams) == 1 {
				return nil, fmt.Errorf("insert of %s job: %w", params.Kind, err)
			}
			return nil, fmt.Errorf("insert of job %d of %d (%s): %w", i+1, len(manyParams), params.Kind, err)
		}
	}
	return doInner(ctx)
}

// prepareInsert finds the job context of a job about to be inserted (from its
// args or from its metadata), validates it and stores it, normalised, in the
// job's metadata.
func (e *Engine) prepareInsert(params *rivertype.JobInsertParams) error {
	stored, err := metadataJobContext(params.Metadata)
	if err != nil {
		return err
	}

	var jc JobContext
	switch argsWithContext, fromArgs := params.Args.(JobArgsWithJobContext); {
	case fromArgs && stored != nil:
		return fmt.Errorf("workflow: job context given twice, by the args' JobContext method and in InsertOpts.Metadata[%q]; give it once", MetadataKey)
	case fromArgs:
		jc = argsWithContext.JobContext()
		if err := jc.Validate(); err != nil {
			return err
		}
	case stored != nil:
		if jc, err = decodeJobContext(stored); err != nil {
			return err
		}
	default:
		return nil // a plain River job
	}

	encoded, err := json.Marshal(jc.normalized())
	if err != nil {
		return err
	}
	params.Metadata, err = setMetadataKey(params.Metadata, encoded)
	return err
}
