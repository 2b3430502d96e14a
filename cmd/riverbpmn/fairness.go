package main

import (
	"context"
	"io"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// orderFlags adds the order flags (--by-priority, --timers-first,
// --by-due-date) of the on-demand index verbs to v: the index of the
// clients (described by whose) with that acquisition order.
func orderFlags(v *verb, whose string) *workflow.Acquisition {
	var order workflow.Acquisition
	v.fs.BoolVar(&order.ByPriority, "by-priority", false, "the index of "+whose+" that fetch by priority (Acquisition.ByPriority)")
	v.fs.BoolVar(&order.TimersFirst, "timers-first", false, "the index of "+whose+" that fetch timers first (Acquisition.TimersFirst)")
	v.fs.BoolVar(&order.ByDueDate, "by-due-date", false, "the index of "+whose+" that fetch by due date (Acquisition.ByDueDate)")
	return &order
}

// runFairnessEnable creates the tenant index of one acquisition order, the
// one a fair client with the order's flags (--by-priority, --timers-first,
// --by-due-date; none: River's order) reads.
func runFairnessEnable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("fairness-enable")
	order := orderFlags(v, "fair clients")
	enable := func(engine *workflow.Engine, ctx context.Context) error {
		return engine.EnableTenantFairness(ctx, *order)
	}
	return runSwitchVerb(ctx, v, args, stdout, enable, fairnessSwitch)
}

// runFairnessDisable drops the tenant indexes of every order.
func runFairnessDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "fairness-disable", args, stdout, (*workflow.Engine).DisableTenantFairness, fairnessSwitch)
}

// fairnessSwitch reports whether any of the tenant indexes fair fetching
// reads is there.
var fairnessSwitch = switchState{
	read: func(engine *workflow.Engine, ctx context.Context) (bool, error) {
		return engine.TenantFairnessEnabled(ctx)
	},
	jsonKey: "tenant_fairness_indexes",
	label:   "tenant fairness indexes", on: "present", off: "absent",
}

// runFetchIndexEnable creates the fetch-order index of one acquisition
// order, the one a client with the order's flags reads (River's order needs
// none: give at least one flag).
func runFetchIndexEnable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("fetch-index-enable")
	order := orderFlags(v, "clients")
	enable := func(engine *workflow.Engine, ctx context.Context) error {
		if workflow.FetchOrderIndex(*order) == "" {
			return usagef("give --by-priority, --timers-first and/or --by-due-date: River's order reads River's own index")
		}
		return engine.EnableFetchOrderIndexes(ctx, *order)
	}
	return runSwitchVerb(ctx, v, args, stdout, enable, fetchIndexSwitch)
}

// runFetchIndexDisable drops the fetch-order indexes of every order.
func runFetchIndexDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "fetch-index-disable", args, stdout, (*workflow.Engine).DisableFetchOrderIndexes, fetchIndexSwitch)
}

// fetchIndexSwitch reports whether any fetch-order index is there.
var fetchIndexSwitch = switchState{
	read: func(engine *workflow.Engine, ctx context.Context) (bool, error) {
		names, err := engine.FetchOrderIndexes(ctx)
		return len(names) > 0, err
	},
	jsonKey: "fetch_order_indexes",
	label:   "fetch-order indexes", on: "present", off: "absent",
}

// runHeadIndexEnable creates the exclusive head-of-key index of one
// acquisition order (timers first and/or by due date), for the exclusive
// scope in force or, with --exclusive-scope, for that scope (to prepare a
// change of scope).
func runHeadIndexEnable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("head-index-enable")
	order := orderFlags(v, "exclusive clients")
	var scope scopeFlag
	v.fs.Var(&scope, "exclusive-scope", "build the index of this `SCOPE` (process-instance, root-process-instance) instead of the scope in force")
	enable := func(engine *workflow.Engine, ctx context.Context) error {
		if workflow.ExclusiveHeadIndex(exclusive.ProcessInstance, *order) == "" {
			return usagef("give --timers-first and/or --by-due-date: River's order and by priority alone have head-of-key indexes from migrations")
		}
		if scope.set {
			if !scope.scope.Enabled() {
				return usagef("--exclusive-scope none enforces nothing: it has no head-of-key index")
			}
			return engine.EnableExclusiveHeadIndexesForScope(ctx, scope.scope, *order)
		}
		return engine.EnableExclusiveHeadIndexes(ctx, *order)
	}
	return runSwitchVerb(ctx, v, args, stdout, enable, headIndexSwitch)
}

// runHeadIndexDisable drops the exclusive head-of-key indexes of every
// order, leaving the fetch-order indexes.
func runHeadIndexDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "head-index-disable", args, stdout, (*workflow.Engine).DisableExclusiveHeadIndexes, headIndexSwitch)
}

// headIndexSwitch reports whether any on-demand head-of-key index is there.
var headIndexSwitch = switchState{
	read: func(engine *workflow.Engine, ctx context.Context) (bool, error) {
		names, err := engine.ExclusiveHeadIndexes(ctx)
		return len(names) > 0, err
	},
	jsonKey: "exclusive_head_indexes",
	label:   "exclusive head-of-key indexes", on: "present", off: "absent",
}
