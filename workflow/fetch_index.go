package workflow

import (
	"context"
	"slices"

	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/internal/listpage"
)

// fetchOrderIndexes are the indexes of the acquisition orders other than
// River's (index.FetchOrder), created on demand.
var fetchOrderIndexes = &onDemandIndexes{index.FetchOrder}

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

// fetchOrderIndexNames are the fetch-order indexes of orders
// (FetchOrderIndex), each once.
func fetchOrderIndexNames(orders []Acquisition) []string {
	var names []string
	for _, acq := range orders {
		if name := FetchOrderIndex(acq); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// EnableFetchOrderIndexes creates, in the engine's schema, the index each
// given acquisition's order reads (FetchOrderIndex; nothing for River's
// order), and, when the scope in force is exclusive, the order's
// head-of-key index (exclusive.Exclusive.EnableHeadIndexes), with CREATE INDEX
// CONCURRENTLY. A client whose driver fetches in such an order calls it
// for its own acquisition when it starts.
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.Enable] with the
// names of [FetchOrderIndex] and [ExclusiveHeadIndex].
func (e *Engine) EnableFetchOrderIndexes(ctx context.Context, orders ...Acquisition) error {
	if err := e.Indexes().Enable(ctx, fetchOrderIndexNames(orders)...); err != nil {
		return err
	}
	return e.Exclusive().EnableHeadIndexes(ctx, acqOrders(orders)...)
}

// DisableFetchOrderIndexes drops every fetch-order index and every
// exclusive head-of-key index of EnableExclusiveHeadIndexes (concurrently).
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.Disable].
func (e *Engine) DisableFetchOrderIndexes(ctx context.Context) error {
	return e.Indexes().Disable(ctx, append(index.FetchOrder.Names(), exclusiveHeadIndexes.Names()...)...)
}

// FetchOrderIndexes returns the names of the fetch-order indexes and the
// exclusive head-of-key indexes (ExclusiveHeadIndex) that exist and are
// valid in the engine's schema, sorted (none: nil).
//
// Deprecated: use [Engine.Indexes] and [index.Indexes.List].
func (e *Engine) FetchOrderIndexes(ctx context.Context) ([]string, error) {
	return e.enabledIndexes(ctx, index.FetchOrder.Name(), exclusiveHeadIndexes.Name())
}

// enabledIndexes returns the names of the enabled indexes of families, by
// name (none: nil).
func (e *Engine) enabledIndexes(ctx context.Context, families ...string) ([]string, error) {
	var names []string
	for _, family := range families {
		res, err := e.Indexes().List(ctx, &index.ListParams{Family: family, Enabled: true, Limit: listpage.MaxLimit})
		if err != nil {
			return nil, err
		}
		for _, in := range res.Items {
			names = append(names, in.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}
