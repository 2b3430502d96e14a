package fairness_test

import (
	"fmt"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// A client that fetches fairly across tenants: every tenant with waiting
// jobs gets its turn in each fetch, "acme" three slots per round, whatever
// the size of another tenant's backlog. Jobs get their tenant from their
// process definition (or JobContext.TenantID).
func Example_fairByTenant() {
	engine, err := workflow.NewEngine(nil, &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "invoice", TenantID: "acme"}},
	})
	if err != nil {
		panic(err)
	}
	_, err = engine.NewDriver(workflow.Acquisition{
		ByPriority:    true,
		FairByTenant:  true,
		TenantWeights: map[string]int{"acme": 3},
	})
	fmt.Println("fair driver:", err)

	_, err = engine.NewDriver(workflow.Acquisition{FairByTenant: true, TenantWeights: map[string]int{"globex": 0}})
	fmt.Println(err)
	// Output:
	// fair driver: <nil>
	// workflow: Acquisition.TenantWeights["globex"] 0 must be between 1 and 1000
}
