package main

import (
	"context"
	"fmt"
	"io"

	"github.com/riverbpmn/riverbpmn/workflow"
)

func runFairnessEnable(ctx context.Context, args []string, stdout io.Writer) error {
	return runFairnessSwitch(ctx, "fairness-enable", args, stdout, (*workflow.Engine).EnableTenantFairness)
}

func runFairnessDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runFairnessSwitch(ctx, "fairness-disable", args, stdout, (*workflow.Engine).DisableTenantFairness)
}

// runFairnessSwitch creates or drops the tenant indexes fair fetching reads
// and prints whether they are there now.
func runFairnessSwitch(ctx context.Context, name string, args []string, stdout io.Writer, change func(*workflow.Engine, context.Context) error) error {
	v := newVerb(name)
	if _, err := v.parse(args); err != nil {
		return err
	}
	engine, closeDB, err := v.engine(ctx, nil)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := change(engine, ctx); err != nil {
		return err
	}
	on, err := engine.TenantFairnessEnabled(ctx)
	if err != nil {
		return err
	}
	return v.print(stdout, map[string]bool{"tenant_fairness_indexes": on}, func(w io.Writer) error {
		state := "absent"
		if on {
			state = "present"
		}
		_, err := fmt.Fprintf(w, "tenant fairness indexes: %s\n", state)
		return err
	})
}
