package workflow

import (
	"context"
	"regexp"
	"slices"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// exclusiveHeadIndexes are the head-of-key indexes of the orders with
// timers first or due date (sql/exclusive_head_index_create.sql), one per
// such order and exclusive scope, created on demand.
var exclusiveHeadIndexes = newOnDemandIndexes("exclusive head-of-key index", exclusiveHeadIndexNames,
	regexp.MustCompile(`\briver_bpmn_job_exclusive_(instance|root)_[ptd]+\b`), "exclusive_head_index_create.sql", "exclusive_head_index_drop.sql")

// exclusiveHeadIndexNames are the names of every on-demand head-of-key
// index (exclusive.HeadIndexNames): one per enforcing scope and order but
// River's and by priority alone, whose head-of-key indexes are
// migrations' (riverbpmn/005, 020).
var exclusiveHeadIndexNames = exclusive.HeadIndexNames()

// ExclusiveHeadIndex names the on-demand head-of-key index that an
// exclusive client enforcing scope, whose acquisition is acq, reads to find
// the head of a key (the key's first waiting job in acq's order): for
// orders with TimersFirst or ByDueDate, river_bpmn_job_exclusive_instance_
// or river_bpmn_job_exclusive_root_ with the order's suffix (as in
// FetchOrderIndex), such as river_bpmn_job_exclusive_instance_ptd. It is ""
// when scope enforces nothing, and for River's order and by priority alone,
// whose head-of-key indexes every migrated schema has
// (exclusive.HeadIndex of acq.Order).
func ExclusiveHeadIndex(scope exclusive.Scope, acq Acquisition) string {
	return exclusive.HeadIndex(scope, acq.Order())
}

// hasOnDemandHeadIndex reports whether acq's order has an on-demand
// head-of-key index (in every scope): an order with TimersFirst or
// ByDueDate.
func hasOnDemandHeadIndex(acq Acquisition) bool {
	return ExclusiveHeadIndex(exclusive.ProcessInstance, acq) != ""
}

// acqOrders are the orders of acqs (Acquisition.Order), as the exclusive
// handle's head-of-key index calls take them.
func acqOrders(acqs []Acquisition) []string {
	out := make([]string, len(acqs))
	for i, acq := range acqs {
		out[i] = acq.Order()
	}
	return out
}

// EnableExclusiveHeadIndexes creates, in the engine's schema, the
// head-of-key index of each given acquisition's order for the exclusive
// scope in force (ExclusiveHeadIndex, ExclusiveScopeInForce), with CREATE
// INDEX CONCURRENTLY. EnableFetchOrderIndexes calls it, and so does the
// start of a fair client, so an application rarely needs to. Without it an
// exclusive fetch in such an order stays correct, but each candidate's head
// probe reads every waiting job of its key. A database whose exclusive
// clients fetch in River's order or by priority alone never has these
// indexes, and its inserts pay nothing for them. Idempotent; clients
// starting together build an index once. An index left invalid by an
// interrupted build is dropped and built again.
//
// Deprecated: use [Engine.Exclusive] and
// [exclusive.Exclusive.EnableHeadIndexes] with the orders'
// [Acquisition.Order].
func (e *Engine) EnableExclusiveHeadIndexes(ctx context.Context, acqs ...Acquisition) error {
	return e.Exclusive().EnableHeadIndexes(ctx, acqOrders(acqs)...)
}

// EnableExclusiveHeadIndexesForScope is EnableExclusiveHeadIndexes for the
// given scope instead of the scope in force: to prepare a schema for the
// scope its clients will enforce after a change of scope (and for the
// benchmark, which measures both scopes on one schema).
//
// Deprecated: use [Engine.Exclusive] and
// [exclusive.Exclusive.EnableHeadIndexesForScope] with the orders'
// [Acquisition.Order].
func (e *Engine) EnableExclusiveHeadIndexesForScope(ctx context.Context, scope exclusive.Scope, acqs ...Acquisition) error {
	return e.Exclusive().EnableHeadIndexesForScope(ctx, scope, acqOrders(acqs)...)
}

// enableExclusiveHeadIndexes builds the named head-of-key indexes
// (exclusive.HandleConfig.EnableHeadIndexes); on an engine without a pool
// it fails, even with none to build.
func (e *Engine) enableExclusiveHeadIndexes(ctx context.Context, names []string) error {
	if e.dbPool == nil {
		return errNoPool
	}
	return exclusiveHeadIndexes.enable(ctx, e, names)
}

// DisableExclusiveHeadIndexes drops every on-demand head-of-key index
// (ExclusiveHeadIndex), concurrently, and leaves the fetch-order indexes.
// Exclusive fetches in those orders stay correct, but each candidate's head
// probe reads every waiting job of its key; a client fetching in such an
// order creates its index again when it starts.
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.DisableHeadIndexes].
func (e *Engine) DisableExclusiveHeadIndexes(ctx context.Context) error {
	return e.Exclusive().DisableHeadIndexes(ctx)
}

// ExclusiveHeadIndexes returns the names of the on-demand head-of-key
// indexes (ExclusiveHeadIndex) that exist and are valid in the engine's
// schema, sorted (none: nil). FetchOrderIndexes lists them too, with the
// fetch-order indexes.
//
// Deprecated: use [Engine.Exclusive] and [exclusive.Exclusive.HeadIndexes].
func (e *Engine) ExclusiveHeadIndexes(ctx context.Context) ([]string, error) {
	return e.Exclusive().HeadIndexes(ctx)
}

// exclusiveHeadIndexNames is ExclusiveHeadIndexes' listing.
func (e *Engine) exclusiveHeadIndexNames(ctx context.Context) ([]string, error) {
	names, err := exclusiveHeadIndexes.valid(ctx, e)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}
