package incident_test

import (
	"context"
	"fmt"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/bulk"
	"github.com/riverbpmn/riverbpmn/incident"
	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ExampleIncidents_List discards three jobs (their retries set to 0), then
// lists the open incidents of the "order-" instances a page of one at a
// time, oldest first, following Next until it is empty.
func ExampleIncidents_List() {
	ctx := context.Background()
	tb := testutil.PanicTB()
	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{Config: &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "p"}},
		JobDefinitions:     []workflow.JobDefinition{{ID: "def", ProcessDefinitionKey: "p", ActivityID: "act", Kind: "incident_test"}},
	}})
	for _, instance := range []string{"order-1", "invoice-1", "order-2"} {
		res, err := bundle.Client.Insert(ctx, failArgs{Instance: instance}, nil)
		if err != nil {
			panic(err)
		}
		if err := bundle.Engine.Jobs().SetRetries(ctx, res.Job.ID, 0); err != nil {
			panic(err)
		}
	}

	params := &incident.ListParams{
		Filter: incident.Filter{Incidents: bulk.Incidents{InstancePrefix: "order-"}},
		Oldest: true,
		Limit:  1,
	}
	for {
		page, err := bundle.Engine.Incidents().List(ctx, params)
		if err != nil {
			panic(err)
		}
		for _, in := range page.Items {
			fmt.Printf("%s incident of job definition %s in %s\n", in.Type, in.JobDefinitionID, in.ProcessInstanceID)
		}
		if page.Next == "" {
			break
		}
		params.After = page.Next
	}
	// Output:
	// failedJob incident of job definition def in order-1
	// failedJob incident of job definition def in order-2
}
