package workflow

import (
	"context"
	"sync/atomic"
	"time"
)

// contextFormRecheck is how long the engine writes the array form of the
// job context to a schema without migration riverbpmn/028 before it looks
// again: a schema migrated under running clients gets the labelled form
// from their inserts within it (until then the migration's insert trigger
// rewrites the array).
const contextFormRecheck = 10 * time.Second

// contextFormLookTimeout bounds the look at the schema's form: an insert
// never waits longer for it (a pool whose connections are all taken, for
// instance by the inserting transactions, answers with the array form).
const contextFormLookTimeout = time.Second

// contextForm is what the engine knows of the form of the job context its
// schema holds (see JobContext): whether it has seen migration
// riverbpmn/028, and when it last looked.
type contextForm struct {
	labelled  atomic.Bool
	checkedAt atomic.Int64 // unix nanoseconds of the last look; 0: never
}

// labelledContext reports whether the engine writes the labelled job
// context: once its schema has migration riverbpmn/028 (its function
// river_bpmn_ctx_labelled exists), from then on. Until then it writes the
// array, which that migration's readers do not read, but which every
// release reads and which the migration rewrites; it looks again every
// contextFormRecheck, in the inserting goroutine. An engine without a pool,
// or a look that fails, writes the array: a schema with the migration
// rewrites it on insert.
func (e *Engine) labelledContext(ctx context.Context) bool {
	form := &e.contextForm
	if form.labelled.Load() {
		return true
	}
	if e.dbPool == nil {
		return false
	}
	now := time.Now().UnixNano()
	last := form.checkedAt.Load()
	if last != 0 && time.Duration(now-last) < contextFormRecheck {
		return false
	}
	if !form.checkedAt.CompareAndSwap(last, now) {
		return false // another insert is looking
	}
	ctx, cancel := context.WithTimeout(ctx, contextFormLookTimeout)
	defer cancel()
	var found bool
	err := e.dbPool.QueryRow(ctx, "SELECT to_regprocedure($1) IS NOT NULL",
		qualifiedTable(e.config.Schema, "river_bpmn_ctx_labelled")+"(jsonb)").Scan(&found)
	if err != nil || !found {
		return false
	}
	form.labelled.Store(true)
	return true
}
