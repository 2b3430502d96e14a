package fairness

import (
	"embed"
	"slices"

	"github.com/riverbpmn/riverbpmn/fetchplan"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var fetchStepSQL = sqltemplate.MustRead(sqlFS, "sql/fetch_step.sql")

// FetchStepSQL is the text of the fair step of a client's fetch
// statement: the text/template definitions "fair" (the rounds, ending in
// the ranked picks fair_pick) and "fair_locked_jobs" (the jobs a fair
// client without exclusivity locks) that the fetch template
// (fetchplan/sql/fetch.sql) and the exclusive step execute for a fair
// client. They read the plan's Group and Weight (Part), the limit they are
// given, and the parameters of Params. FetchStep plugs it in.
func FetchStepSQL() string { return fetchStepSQL }

// FetchStep is the fair step of the fetch statement of a client whose plan
// has Part.
func FetchStep() *fetchplan.FairStep { return &fetchplan.FairStep{Templates: fetchStepSQL} }

// Params are the names of the fetch parameters of the fair step, whose
// values for each fetch are Turns.Arg's.
var Params = []string{"fair_round", "fair_tenant", "fair_used"}

// MaxWeight is the largest weight of a tenant; the smallest is 1.
const MaxWeight = 1000

// Weight is tenant's weight in weights: its slots per round, 1 when
// weights does not name it (or names less).
func Weight(weights map[string]int, tenant string) int {
	return max(weights[tenant], 1)
}

// Part is the fetch plan part (package fetchplan) of a client that fetches
// fairly across the groups of group, an SQL expression over the row
// river_job that is never NULL (the tenant, "" for none), with weights
// (Weight; nil or empty: every group 1). The tenant index of the client's
// order (index.TenantFairness) is on group.
func Part(group string, weights map[string]int) fetchplan.Part {
	part := fetchplan.Part{Name: "FairByTenant", Group: group}
	if len(weights) == 0 {
		return part
	}
	names := make([]string, 0, len(weights))
	for name := range weights {
		names = append(names, name)
	}
	slices.Sort(names)
	values := make([]int32, len(names))
	for i, name := range names {
		values[i] = int32(min(max(weights[name], 1), MaxWeight)) //nolint:gosec // bounded above
	}
	part.Weight = "coalesce((SELECT w.weight FROM unnest(@tenant_weight_names::text[], @tenant_weight_values::integer[]) AS w(name, weight) WHERE w.name = coalesce(fair_group, '')), 1)"
	part.Params = []fetchplan.Param{
		{Name: "tenant_weight_names", Value: func() any { return names }},
		{Name: "tenant_weight_values", Value: func() any { return values }},
	}
	return part
}
