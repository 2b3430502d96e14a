package exclusive

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/riverbpmn/riverbpmn/index"
)

// HeadIndex names the on-demand head-of-key index that an exclusive client
// enforcing scope and fetching in order reads to find the head of a key
// (the key's first waiting job in that order). An order is named as the
// on-demand indexes name it (index.OrderSuffixes; workflow.Acquisition.Order):
// p by priority, t timers first, d by due date, "" River's order. The name
// is river_bpmn_job_exclusive_instance_ or river_bpmn_job_exclusive_root_
// and the order, such as river_bpmn_job_exclusive_instance_ptd. It is ""
// when scope enforces nothing, and for River's order and by priority alone,
// whose head-of-key indexes every migrated schema has.
func HeadIndex(scope Scope, order string) string {
	if !scope.Enabled() || !hasOnDemandHeadIndex(order) {
		return ""
	}
	if scope == RootProcessInstance {
		return "river_bpmn_job_exclusive_root_" + order
	}
	return "river_bpmn_job_exclusive_instance_" + order
}

// HeadIndexNames are the names of every on-demand head-of-key index
// (HeadIndex): one per enforcing scope and order but River's and by
// priority alone.
func HeadIndexNames() []string {
	var names []string
	for _, scope := range []Scope{ProcessInstance, RootProcessInstance} {
		for _, order := range index.OrderSuffixes {
			if name := HeadIndex(scope, order); name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}

// hasOnDemandHeadIndex reports whether order has an on-demand head-of-key
// index (in every enforcing scope): an order with timers first or by due
// date.
func hasOnDemandHeadIndex(order string) bool { return order != "" && order != "p" }

// EnableHeadIndexes creates, in the schema, the head-of-key index of each
// given order (HeadIndex; orders as index.OrderSuffixes names them, such as
// workflow.Acquisition.Order gives) for the scope in force (Scope), with
// CREATE INDEX CONCURRENTLY. River's order and by priority alone need
// none: with only those, nothing is built and the scope is not read. A
// client whose driver fetches in such an order builds its own when it
// starts, so an application rarely needs to. Without it an exclusive fetch
// in such an order stays correct, but each candidate's head probe reads
// every waiting job of its key. Idempotent; clients starting together
// build an index once. An index left invalid by an interrupted build is
// dropped and built again. An order that is none of index.OrderSuffixes is
// an error naming it, before anything is read.
func (x *Exclusive) EnableHeadIndexes(ctx context.Context, orders ...string) error {
	if err := checkOrders(orders); err != nil {
		return err
	}
	if !slices.ContainsFunc(orders, hasOnDemandHeadIndex) {
		return x.enableHeadIndexes(ctx, nil)
	}
	scope, err := x.Scope(ctx)
	if err != nil {
		return err
	}
	return x.EnableHeadIndexesForScope(ctx, scope, orders...)
}

// EnableHeadIndexesForScope is EnableHeadIndexes for the given scope
// instead of the scope in force: to prepare a schema for the scope its
// clients will enforce after a change of scope. A scope that enforces
// nothing (None) has no head-of-key index: nothing is built.
func (x *Exclusive) EnableHeadIndexesForScope(ctx context.Context, scope Scope, orders ...string) error {
	if err := checkOrders(orders); err != nil {
		return err
	}
	var names []string
	for _, order := range orders {
		if name := HeadIndex(scope, order); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return x.enableHeadIndexes(ctx, names)
}

// enableHeadIndexes builds the named head-of-key indexes through
// HandleConfig.EnableHeadIndexes (names nil: none, which still fails on an
// engine without a pool).
func (x *Exclusive) enableHeadIndexes(ctx context.Context, names []string) error {
	if x.config.EnableHeadIndexes == nil {
		return errors.New("exclusive: this handle cannot create head-of-key indexes (HandleConfig.EnableHeadIndexes is not set)")
	}
	return x.config.EnableHeadIndexes(ctx, names)
}

// checkOrders refuses an order that is none of index.OrderSuffixes.
func checkOrders(orders []string) error {
	for _, order := range orders {
		if !slices.Contains(index.OrderSuffixes, order) {
			return fmt.Errorf("exclusive: order %q is none of %q (p by priority, t timers first, d by due date, in that order)", order, index.OrderSuffixes)
		}
	}
	return nil
}
