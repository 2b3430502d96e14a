package riverbpmntest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/riverbpmntest"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Example sets up a test schema, an engine with a process definition and a
// client, then inserts a job of the process. In a test, pass the test's
// *testing.T instead of testutil.PanicTB.
func Example() {
	ctx := context.Background()
	tb := testutil.PanicTB()

	schema := riverdbtest.TestSchema(ctx, tb, riverbpmntest.Driver(tb), nil)
	bundle := riverbpmntest.New(ctx, tb, schema, &riverbpmntest.Opts{Config: orderConfig()})

	res, err := bundle.Client.Insert(ctx, ChargeArgs{OrderID: "42"}, nil)
	if err != nil {
		panic(err)
	}
	jc, err := workflow.JobContextOf(res.Job)
	if err != nil {
		panic(err)
	}
	// riverdbtest names the schema after the test package, riverbpmntest_test,
	// cut to 15 characters.
	fmt.Println("schema named after the test package:", strings.HasPrefix(schema, "riverbpmntest_t_"))
	fmt.Println("job definition:", jc.JobDefinitionID, "attempts:", res.Job.MaxAttempts)
	// Output:
	// schema named after the test package: true
	// job definition: charge-async attempts: 3
}
