package workflow

import (
	"context"
	"strconv"

	"github.com/riverbpmn/riverbpmn/bulk"
)

// Bulk operations as rows (package bulk): recorded before they run, their
// progress saved after each batch, taken over and resumed by another
// process when the one running them dies. The console runs its bulk forms
// this way.

// CreateBulkOperation records spec as a bulk operation run by owner.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.Create].
func (e *Engine) CreateBulkOperation(ctx context.Context, spec *bulk.Spec, description, owner string) (*bulk.Operation, error) {
	return e.Bulk().Create(ctx, spec, description, owner)
}

// ClaimStaleBulkOperations makes owner the runner of the running bulk
// operations whose runner died or gave them up, at most limit.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.Claim].
func (e *Engine) ClaimStaleBulkOperations(ctx context.Context, owner string, limit int) ([]*bulk.Operation, error) {
	return e.Bulk().Claim(ctx, owner, limit)
}

// BulkOperation returns bulk operation id.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.Get].
func (e *Engine) BulkOperation(ctx context.Context, id int64) (*bulk.Operation, error) {
	return e.Bulk().Get(ctx, id)
}

// BulkOperations returns the bulk operations before id before (0: from the
// newest), newest first, at most limit (1 to MaxPageSize).
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.List].
func (e *Engine) BulkOperations(ctx context.Context, before int64, limit int) ([]*bulk.Operation, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	p := &bulk.ListParams{Limit: limit}
	if before > 0 {
		p.After = strconv.FormatInt(before, 10)
	}
	res, err := e.Bulk().List(ctx, p)
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// RunBulkOperation runs op as owner until it ends.
//
// Deprecated: use [Engine.Bulk] and [bulk.Operations.Run].
func (e *Engine) RunBulkOperation(ctx context.Context, op *bulk.Operation, owner string) error {
	return e.Bulk().Run(ctx, op, owner)
}
