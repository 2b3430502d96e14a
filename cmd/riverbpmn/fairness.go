package main

import (
	"context"
	"io"

	"github.com/riverbpmn/riverbpmn/workflow"
)

func runFairnessEnable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "fairness-enable", args, stdout, (*workflow.Engine).EnableTenantFairness, fairnessSwitch)
}

func runFairnessDisable(ctx context.Context, args []string, stdout io.Writer) error {
	return runSwitch(ctx, "fairness-disable", args, stdout, (*workflow.Engine).DisableTenantFairness, fairnessSwitch)
}

// fairnessSwitch reports whether the tenant indexes fair fetching reads are
// there.
var fairnessSwitch = switchState{
	read: (*workflow.Engine).TenantFairnessEnabled, jsonKey: "tenant_fairness_indexes",
	label: "tenant fairness indexes", on: "present", off: "absent",
}
