package main

// The on-demand indexes: indexes enable|disable fetch-order|fairness and
// exclusive indexes enable|disable (the head-of-key indexes), each printing
// the indexes of its kind present afterwards; the listings are in lists.go.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/riverbpmn/riverbpmn/exclusive"
	"github.com/riverbpmn/riverbpmn/index"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// indexKind is one kind of on-demand index: how to list, create (for an
// acquisition order) and drop (every order's) the indexes of the kind.
type indexKind struct {
	// whose names the clients that read the kind's index, for the order
	// flags' help.
	whose   string
	list    func(*workflow.Engine, context.Context) ([]string, error)
	enable  func(*workflow.Engine, context.Context, workflow.Acquisition) error
	disable func(*workflow.Engine, context.Context) error
}

// headIndexFamily is the index family of the exclusive head-of-key
// indexes (index.Index.Family).
const headIndexFamily = "exclusive-head-of-key"

// namesOfFamily returns the names of the indexes of family present.
func namesOfFamily(engine *workflow.Engine, ctx context.Context, family string) ([]string, error) {
	var names []string
	for p := (&index.ListParams{Family: family, Enabled: true, Limit: workflow.MaxPageSize}); ; {
		out, err := engine.Indexes().List(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, ix := range out.Items {
			names = append(names, ix.Name)
		}
		if out.Next == "" {
			return names, nil
		}
		p.After = out.Next
	}
}

// indexKinds are the kinds of on-demand index, by the name the verbs take,
// each through the index handle (Engine.Indexes) by the names of the
// order's indexes.
var indexKinds = map[string]indexKind{
	"fetch-order": {
		whose: "clients",
		list: func(engine *workflow.Engine, ctx context.Context) ([]string, error) {
			return namesOfFamily(engine, ctx, index.FetchOrder.Name())
		},
		enable: func(engine *workflow.Engine, ctx context.Context, order workflow.Acquisition) error {
			name := workflow.FetchOrderIndex(order)
			if name == "" {
				return usagef("give --by-priority, --timers-first and/or --by-due-date: River's order reads River's own index")
			}
			if err := engine.Indexes().Enable(ctx, name); err != nil {
				return err
			}
			// With exclusive jobs, the order's head-of-key index too.
			return engine.Exclusive().EnableHeadIndexes(ctx, order.Order())
		},
		disable: func(engine *workflow.Engine, ctx context.Context) error {
			if err := engine.Indexes().Disable(ctx, index.FetchOrder.Names()...); err != nil {
				return err
			}
			return engine.Exclusive().DisableHeadIndexes(ctx)
		},
	},
	"fairness": {
		whose: "fair clients",
		list: func(engine *workflow.Engine, ctx context.Context) ([]string, error) {
			return namesOfFamily(engine, ctx, index.TenantFairness.Name())
		},
		enable: func(engine *workflow.Engine, ctx context.Context, order workflow.Acquisition) error {
			return engine.Indexes().Enable(ctx, workflow.TenantFairnessIndex(order))
		},
		disable: func(engine *workflow.Engine, ctx context.Context) error {
			return engine.Indexes().Disable(ctx, index.TenantFairness.Names()...)
		},
	},
	"head-of-key": {
		whose: "exclusive clients",
		list: func(engine *workflow.Engine, ctx context.Context) ([]string, error) {
			return engine.Exclusive().HeadIndexes(ctx)
		},
		enable: func(engine *workflow.Engine, ctx context.Context, order workflow.Acquisition) error {
			return engine.Exclusive().EnableHeadIndexes(ctx, order.Order())
		},
		disable: func(engine *workflow.Engine, ctx context.Context) error {
			return engine.Exclusive().DisableHeadIndexes(ctx)
		},
	},
}

// orderFlags adds the order flags (--by-priority, --timers-first,
// --by-due-date) of the index verbs to v: the index of the clients
// (described by whose) with that acquisition order.
func orderFlags(v *verb, whose string) *workflow.Acquisition {
	var order workflow.Acquisition
	v.fs.BoolVar(&order.ByPriority, "by-priority", false, "the index of "+whose+" that fetch by priority (Acquisition.ByPriority)")
	v.fs.BoolVar(&order.TimersFirst, "timers-first", false, "the index of "+whose+" that fetch timers first (Acquisition.TimersFirst)")
	v.fs.BoolVar(&order.ByDueDate, "by-due-date", false, "the index of "+whose+" that fetch by due date (Acquisition.ByDueDate)")
	return &order
}

// indexesOutput is what the index verbs print: the indexes of the kind
// present after the change.
type indexesOutput struct {
	Kind    string   `json:"kind"`
	Indexes []string `json:"indexes"`
}

// kindArg parses the KIND of indexes enable|disable: fetch-order or
// fairness (the head-of-key indexes are exclusive indexes').
func kindArg(v *verb, args []string) (string, error) {
	positionals, err := v.parse(args, "KIND")
	if err != nil {
		return "", err
	}
	switch kind := positionals[0]; kind {
	case "fetch-order", "fairness":
		return kind, nil
	case "head-of-key":
		return "", fmt.Errorf("KIND %q: the head-of-key indexes are riverbpmn exclusive indexes'", kind)
	default:
		return "", fmt.Errorf("KIND %q is not fetch-order or fairness", kind)
	}
}

// runIndexesEnable creates the fetch-order or tenant fairness index of one
// acquisition order, the one a client with the order's flags reads.
func runIndexesEnable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("indexes enable")
	order := orderFlags(v, "clients (fetch-order) or fair clients (fairness)")
	kind, err := kindArg(v, args)
	if err != nil {
		return err
	}
	return changeIndexes(ctx, v, stdout, kind, func(engine *workflow.Engine) error {
		return indexKinds[kind].enable(engine, ctx, *order)
	})
}

// runIndexesDisable drops the fetch-order indexes (and the head-of-key
// indexes) or the tenant fairness indexes of every order.
func runIndexesDisable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("indexes disable")
	kind, err := kindArg(v, args)
	if err != nil {
		return err
	}
	return changeIndexes(ctx, v, stdout, kind, func(engine *workflow.Engine) error {
		return indexKinds[kind].disable(engine, ctx)
	})
}

// runHeadIndexEnable creates the exclusive head-of-key index of one
// acquisition order (timers first and/or by due date), for the exclusive
// scope in force or, with --exclusive-scope, for that scope (to prepare a
// change of scope).
func runHeadIndexEnable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive indexes enable")
	order := orderFlags(v, indexKinds["head-of-key"].whose)
	var scope scopeFlag
	v.fs.Var(&scope, "exclusive-scope", "build the index of this `SCOPE` (process-instance, root-process-instance) instead of the scope in force")
	if _, err := v.parse(args); err != nil {
		return err
	}
	if workflow.ExclusiveHeadIndex(exclusive.ProcessInstance, *order) == "" {
		return usagef("give --timers-first and/or --by-due-date: River's order and by priority alone have head-of-key indexes from migrations")
	}
	if scope.set && !scope.scope.Enabled() {
		return usagef("--exclusive-scope none enforces nothing: it has no head-of-key index")
	}
	return changeIndexes(ctx, v, stdout, "head-of-key", func(engine *workflow.Engine) error {
		if scope.set {
			return engine.Exclusive().EnableHeadIndexesForScope(ctx, scope.scope, order.Order())
		}
		return indexKinds["head-of-key"].enable(engine, ctx, *order)
	})
}

// runHeadIndexDisable drops the exclusive head-of-key indexes of every
// order, leaving the fetch-order indexes.
func runHeadIndexDisable(ctx context.Context, args []string, stdout io.Writer) error {
	v := newVerb("exclusive indexes disable")
	if _, err := v.parse(args); err != nil {
		return err
	}
	return changeIndexes(ctx, v, stdout, "head-of-key", func(engine *workflow.Engine) error {
		return indexKinds["head-of-key"].disable(engine, ctx)
	})
}

// changeIndexes opens the engine, makes the change, and prints the indexes
// of kind present afterwards.
func changeIndexes(ctx context.Context, v *verb, stdout io.Writer, kind string, change func(*workflow.Engine) error) error {
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := change(engine); err != nil {
		return err
	}
	names, err := indexKinds[kind].list(engine, ctx)
	if err != nil {
		return err
	}
	out := indexesOutput{Kind: kind, Indexes: slices.Clip(append([]string{}, names...))}
	return v.print(stdout, out, func(w io.Writer) error {
		present := "none"
		if len(names) > 0 {
			present = strings.Join(names, ", ")
		}
		_, err := fmt.Fprintf(w, "%s indexes: %s\n", kind, present)
		return err
	})
}
