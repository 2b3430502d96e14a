package workflow

import (
	"context"
	"regexp"
	"slices"
)

// fetchOrderIndexes are the indexes of the acquisition orders other than
// River's (sql/fetch_index_create.sql), created on demand.
var fetchOrderIndexes = newOnDemandIndexes("fetch-order index", fetchOrderIndexNames,
	regexp.MustCompile(`\briver_bpmn_fetch_[ptd]+\b`), "fetch_index_create.sql", "fetch_index_drop.sql")

// fetchOrderIndexNames are the names of every fetch-order index, one per
// order but River's.
var fetchOrderIndexNames = func() []string {
	var names []string
	for _, suffix := range orderIndexSuffixes {
		if suffix != "" {
			names = append(names, "river_bpmn_fetch_"+suffix)
		}
	}
	return names
}()

// FetchOrderIndex names the index a client whose acquisition is acq reads
// to fetch in its order, river_bpmn_fetch_ with a suffix naming the order
// keys acq enables (p ByPriority, t TimersFirst, d ByDueDate), such as
// river_bpmn_fetch_pd; "" for River's order, which River's own index
// serves. Only those three options choose the index; filters (priority
// range, deployments) read it too. A fair client (FairByTenant) reads its
// tenant index instead (TenantFairnessIndex).
func FetchOrderIndex(acq Acquisition) string {
	if suffix := orderSuffix(acq); suffix != "" {
		return "river_bpmn_fetch_" + suffix
	}
	return ""
}

// EnableFetchOrderIndexes creates, in the engine's schema, the index each
// given acquisition's order reads (FetchOrderIndex; nothing for River's
// order), and, when the scope in force is exclusive, the order's
// head-of-key index (EnableExclusiveHeadIndexes), with CREATE INDEX
// CONCURRENTLY: inserts and fetches go on while
// it is built. A client whose driver fetches in such an order calls it for
// its own acquisition when it starts, so an application rarely needs to; a
// database whose clients all fetch in River's order never has these
// indexes, and its inserts pay nothing for them. Idempotent; clients
// starting together build an index once. An index left invalid by an
// interrupted build is dropped and built again.
func (e *Engine) EnableFetchOrderIndexes(ctx context.Context, orders ...Acquisition) error {
	var names []string
	for _, acq := range orders {
		if name := FetchOrderIndex(acq); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if err := fetchOrderIndexes.enable(ctx, e, names); err != nil {
		return err
	}
	return e.EnableExclusiveHeadIndexes(ctx, orders...)
}

// DisableFetchOrderIndexes drops every fetch-order index and every
// exclusive head-of-key index of EnableExclusiveHeadIndexes (concurrently).
// Fetches in those orders stay correct but sort the queue's available jobs
// instead of reading an index, and an exclusive one reads every waiting job
// of a candidate's key; a client fetching in such an order creates its
// indexes again when it starts.
func (e *Engine) DisableFetchOrderIndexes(ctx context.Context) error {
	if err := fetchOrderIndexes.disable(ctx, e); err != nil {
		return err
	}
	return exclusiveHeadIndexes.disable(ctx, e)
}

// FetchOrderIndexes returns the names of the fetch-order indexes and the
// exclusive head-of-key indexes (ExclusiveHeadIndex) that exist and are
// valid in the engine's schema, sorted (none: nil).
func (e *Engine) FetchOrderIndexes(ctx context.Context) ([]string, error) {
	names, err := fetchOrderIndexes.valid(ctx, e)
	if err != nil {
		return nil, err
	}
	heads, err := exclusiveHeadIndexes.valid(ctx, e)
	if err != nil {
		return nil, err
	}
	names = append(names, heads...)
	slices.Sort(names)
	return names, nil
}
