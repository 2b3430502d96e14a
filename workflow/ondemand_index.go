package workflow

import (
	"context"
	"regexp"
	"strings"

	"github.com/riverbpmn/riverbpmn/index"
)

// onDemandIndexes is a family of on-demand indexes on river_job (package
// index) on the engine's pool and schema: one per acquisition order,
// created (CREATE INDEX CONCURRENTLY) when a client that reads one starts,
// or by an operator, so that a database whose clients never fetch that way
// pays nothing for them on insert.
type onDemandIndexes struct {
	*index.Family
}

// newOnDemandIndexes reads a family from its create and drop files of
// sql/ (index.NewFamily), named after what.
func newOnDemandIndexes(what string, names []string, ref *regexp.Regexp, createFile, dropFile string) *onDemandIndexes {
	name := strings.ReplaceAll(strings.TrimSuffix(what, " index"), " ", "-") // "exclusive head-of-key index": "exclusive-head-of-key"
	return &onDemandIndexes{index.NewFamily(name, what, names, ref, mustReadSQL(createFile), mustReadSQL(dropFile))}
}

// valid returns the names of the family's indexes that exist and are valid
// in the engine's schema, sorted (none: nil).
func (s *onDemandIndexes) valid(ctx context.Context, e *Engine) ([]string, error) {
	return s.Valid(ctx, e.db(), e.config.Schema)
}

// enable creates the named indexes that are not there and valid
// (index.Family.Enable).
func (s *onDemandIndexes) enable(ctx context.Context, e *Engine, names []string) error {
	return s.Enable(ctx, e.db(), e.config.Schema, names)
}

// disable drops every index of the family (concurrently).
func (s *onDemandIndexes) disable(ctx context.Context, e *Engine) error {
	return s.Disable(ctx, e.db(), e.config.Schema, nil)
}

// orderSuffix is the suffix of the order acq fetches in (Acquisition.Order).
func orderSuffix(acq Acquisition) string { return acq.Order() }

// Order is the order a client with this acquisition fetches in, as the
// on-demand indexes name it (index.OrderSuffixes): p ByPriority, t
// TimersFirst, d ByDueDate, in that order of precedence, such as "pd"; ""
// is River's order. The index calls take it: the fetch-order index is
// river_bpmn_fetch_ and the order (FetchOrderIndex), and
// exclusive.Exclusive.EnableHeadIndexes builds the head-of-key index of an
// order.
func (a Acquisition) Order() string {
	suffix := ""
	if a.ByPriority {
		suffix += "p"
	}
	if a.TimersFirst {
		suffix += "t"
	}
	if a.ByDueDate {
		suffix += "d"
	}
	return suffix
}
