package workflow_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdbtest"
	"github.com/riverqueue/river/rivershared/riversharedtest"
	"github.com/riverqueue/river/rivershared/util/testutil"

	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// ChargeArgs charge an order's payment.
type ChargeArgs struct {
	CustomerStatus string `json:"customer_status"`
}

func (ChargeArgs) Kind() string { return "charge_payment" }

// ExampleEngine_Definitions declares a process whose payment jobs get
// priority 10 for VIP customers, then temporarily downgrades every payment
// job (the payment service is slow) with the job definition's overriding
// priority, and lifts the downgrade again.
func ExampleEngine_Definitions() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()

	config := &workflow.Config{
		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order", Priority: priority.Constant(1)}},
		JobDefinitions: []workflow.JobDefinition{{
			ID: "charge-async", ProcessDefinitionKey: "order", ActivityID: "charge", Kind: "charge_payment",
			Priority: priority.FromArgs(func(args ChargeArgs) int64 {
				if args.CustomerStatus == "VIP" {
					return 10
				}
				return 0
			}),
			RetryCycle: "R5/PT5M",
		}},
	}
	bootstrap, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		panic(err)
	}
	config.Schema = riverdbtest.TestSchema(ctx, testutil.PanicTB(), bootstrap.Driver(), nil)
	engine, err := workflow.NewEngine(dbPool, config)
	if err != nil {
		panic(err)
	}
	client, err := workflow.NewClient(engine, &river.Config{
		Schema: config.Schema,
	})
	if err != nil {
		panic(err)
	}

	insert := func(status string) {
		res, err := client.Insert(ctx, ChargeArgs{CustomerStatus: status},
			workflow.JobContext{ProcessInstanceID: "order-1", JobDefinitionID: "charge-async"}.InsertOpts())
		if err != nil {
			panic(err)
		}
		jc, err := workflow.JobContextOf(res.Job)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s job: priority %d\n", status, *jc.Priority)
	}

	insert("VIP")
	if _, err := engine.Definitions().SetOverridingPriority(ctx, "charge-async", -100, true); err != nil {
		panic(err)
	}
	insert("VIP")
	if err := engine.Definitions().ClearOverridingPriority(ctx, "charge-async"); err != nil {
		panic(err)
	}
	insert("VIP")

	// Output:
	// VIP job: priority 10
	// VIP job: priority -100
	// VIP job: priority 10
}

// ExampleEngine_NewDriver builds the driver of a client that acquires the
// most important jobs first, only in the urgent band, and only of the
// deployments it knows.
func ExampleEngine_NewDriver() {
	engine, err := workflow.NewEngine(nil, &workflow.Config{})
	if err != nil {
		panic(err)
	}
	driver, err := engine.NewDriver(workflow.Acquisition{
		ByPriority:      true,
		TimersFirst:     true,
		PriorityRange:   &priority.Range{Min: 10, Max: 1_000},
		DeploymentAware: true,
		Deployments:     []string{"billing-v3"},
	})
	if err != nil {
		panic(err)
	}
	// Pass driver to river.NewClient; at run time:
	if err := driver.RegisterDeployment("billing-v4"); err != nil {
		panic(err)
	}
	if _, err := driver.UnregisterDeployment("billing-v3"); err != nil {
		panic(err)
	}
	fmt.Println(driver.RegisteredDeployments())

	_, err = engine.NewDriver(workflow.Acquisition{ByPriority: true, PriorityRange: &priority.Range{Min: 5, Max: 1}})
	fmt.Println(err)

	// Output:
	// [billing-v4]
	// workflow: Acquisition.PriorityRange [5, 1]: priority: range min 5 is greater than max 1
}
