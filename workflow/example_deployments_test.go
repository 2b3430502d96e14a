package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivershared/riversharedtest"

	"github.com/riverbpmn/riverbpmn/bpmn"
	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/handlers"
	"github.com/riverbpmn/riverbpmn/priority"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// invoiceModel is a Camunda 7 model as the Modeler writes it: a process
// priority, an asynchronous service task whose priority is an expression,
// with a retry cycle, and a non-exclusive asynchronous continuation after a
// second task.
const invoiceModel = `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Definitions_1">
  <bpmn:process id="invoice" name="Invoice" isExecutable="true" camunda:jobPriority="10">
    <bpmn:startEvent id="start"/>
    <bpmn:serviceTask id="charge" camunda:asyncBefore="true" camunda:jobPriority="${customerPriority}"
        camunda:class="org.example.Charge">
      <bpmn:extensionElements>
        <camunda:failedJobRetryTimeCycle>R5/PT5M</camunda:failedJobRetryTimeCycle>
      </bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:serviceTask id="archive" camunda:asyncAfter="true" camunda:exclusive="false"
        camunda:delegateExpression="${archiver}"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>`

// InvoiceChargeArgs are the args of the charge activity's jobs.
type InvoiceChargeArgs struct {
	Customer string `json:"customer"`
	VIP      bool   `json:"vip"`
}

func (InvoiceChargeArgs) Kind() string { return "invoice_charge" }

// JobContext names the job definition by its alias,
// "<process key>:<activity>:<slot>": the newest deployed version's.
func (a InvoiceChargeArgs) JobContext() workflow.JobContext {
	return workflow.JobContext{
		ProcessInstanceID: "invoice-" + a.Customer,
		JobDefinitionID:   "invoice:charge:async-before",
	}
}

type InvoiceChargeWorker struct {
	river.WorkerDefaults[InvoiceChargeArgs]
}

func (w *InvoiceChargeWorker) Work(ctx context.Context, job *river.Job[InvoiceChargeArgs]) error {
	jc, err := workflow.JobContextOf(job.JobRow)
	if err != nil {
		return err
	}
	fmt.Printf("charging %s: job definition %s, priority %d, retry cycle %s, %d executions\n",
		job.Args.Customer, jc.JobDefinitionID, *jc.Priority, jc.RetryCycle, job.MaxAttempts)
	return nil
}

// ExampleEngine_Deployments deploys a Camunda 7 model and runs a job of its
// asynchronous service task with the model's configuration: the priority
// from its expression, bound to a Go function, and its retry cycle.
func ExampleEngine_Deployments() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	schema := testSchema(ctx, dbPool)

	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
		Schema: schema,
		// ${customerPriority} in the model binds to this function.
		Expressions: bpmn.Expressions{Priorities: map[string]priority.Source{
			"customerPriority": priority.FromArgs(func(args InvoiceChargeArgs) int64 {
				if args.VIP {
					return 100
				}
				return 20
			}),
		}},
	})
	if err != nil {
		panic(err)
	}

	dep, err := engine.Deployments().Create(ctx, deployment.CreateParams{
		Name:      "invoice",
		Resources: []deployment.Resource{{Name: "invoice.bpmn", Content: []byte(invoiceModel)}},
	})
	if err != nil {
		panic(err) // a *bpmn.Error names the file, element, attribute and value
	}
	for _, pd := range dep.ProcessDefinitions {
		for _, jd := range pd.JobDefinitions {
			fmt.Printf("%s: %s %s, exclusive %t\n", jd.ID, jd.Type, jd.Configuration, jd.Exclusive)
		}
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &InvoiceChargeWorker{})
	client, err := workflow.NewClient(engine, &river.Config{
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
		Workers: workers,
	})
	if err != nil {
		panic(err)
	}
	completed, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	if _, err := client.Insert(ctx, InvoiceChargeArgs{Customer: "acme", VIP: true}, nil); err != nil {
		panic(err)
	}
	<-completed
	if err := client.Stop(ctx); err != nil {
		panic(err)
	}

	// Deploying the same model again creates nothing.
	again, err := engine.Deployments().Create(ctx, deployment.CreateParams{
		Name:      "invoice",
		Resources: []deployment.Resource{{Name: "invoice.bpmn", Content: []byte(invoiceModel)}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("duplicate:", again.Duplicate, again.ID == dep.ID)

	// Output:
	// invoice:1:charge:async-before: async-continuation async-before, exclusive true
	// invoice:1:archive:async-after: async-continuation async-after, exclusive false
	// charging acme: job definition invoice:1:charge:async-before, priority 100, retry cycle R5/PT5M, 5 executions
	// duplicate: true true
}

// ExampleEngine_Deployments_badModel shows the error of a model that cannot
// be deployed: it names the file, the element, the attribute and the value,
// and nothing is deployed.
func ExampleEngine_Deployments_badModel() {
	engine, err := workflow.NewEngine(nil, &workflow.Config{})
	if err != nil {
		panic(err)
	}
	_, err = engine.Deployments().Create(context.Background(), deployment.CreateParams{
		Resources: []deployment.Resource{{Name: "invoice.bpmn", Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <process id="invoice">
    <serviceTask id="charge" camunda:asyncBefore="true">
      <extensionElements><camunda:failedJobRetryTimeCycle>R5/PT5X</camunda:failedJobRetryTimeCycle></extensionElements>
    </serviceTask>
  </process>
</definitions>`)}},
	})
	var modelErr *bpmn.Error
	fmt.Println(errors.As(err, &modelErr), modelErr.ElementID, modelErr.Attribute, modelErr.Value)
	fmt.Println(err)
	// Output:
	// true charge camunda:failedJobRetryTimeCycle R5/PT5X
	// bpmn: invoice.bpmn: element "charge": camunda:failedJobRetryTimeCycle "R5/PT5X": is not a valid retry time cycle: retrypolicy: invalid retry cycle "R5/PT5X": part 2: duration "PT5X": unexpected character 'X'
}

// ReportArgs are the args of the nightly report's start timer jobs.
type ReportArgs struct{}

func (ReportArgs) Kind() string { return "nightly_report" }

// ExampleEngine_Deployments_startTimer deploys a model with a timer start
// event and schedules its timer: a deployment records timers, the
// application inserts them (handlers.TimerOf gives the model's).
func ExampleEngine_Deployments_startTimer() {
	ctx := context.Background()
	dbPool, err := pgxpool.New(ctx, riversharedtest.TestDatabaseURL())
	if err != nil {
		panic(err)
	}
	defer dbPool.Close()
	schema := testSchema(ctx, dbPool)
	engine, err := workflow.NewEngine(dbPool, &workflow.Config{Schema: schema})
	if err != nil {
		panic(err)
	}
	dep, err := engine.Deployments().Create(ctx, deployment.CreateParams{
		Name: "reports",
		Resources: []deployment.Resource{{Name: "reports.bpmn", Content: []byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn">
  <process id="nightlyReport" camunda:jobPriority="3">
    <startEvent id="everyNight">
      <timerEventDefinition><timeCycle>R3/2030-01-01T02:00:00Z/P1D</timeCycle></timerEventDefinition>
    </startEvent>
  </process>
</definitions>`)}},
	})
	if err != nil {
		panic(err)
	}
	jd := dep.ProcessDefinitions[0].JobDefinitions[0]
	fmt.Println(jd.ID, jd.Type, jd.Configuration)

	client, err := workflow.NewClient(engine, &river.Config{})
	if err != nil {
		panic(err)
	}
	tm, err := handlers.TimerOf(jd)
	if err != nil {
		panic(err)
	}
	timers := handlers.NewTimers(dbPool, &handlers.TimersConfig{Schema: schema})
	tx, err := dbPool.Begin(ctx)
	if err != nil {
		panic(err)
	}
	defer tx.Rollback(ctx)
	// A start timer belongs to its process definition, not to an instance.
	res, err := timers.InsertTx(ctx, client, tx, ReportArgs{}, tm,
		workflow.JobContext{ProcessDefinitionKey: "nightlyReport", JobDefinitionID: jd.ID}.InsertOpts())
	if err != nil {
		panic(err)
	}
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	jc, err := workflow.JobContextOf(res.Job.Job)
	if err != nil {
		panic(err)
	}
	fmt.Println("first due", res.DueAt.Format(time.RFC3339), "priority", *jc.Priority, "type", jc.JobType)
	// Output:
	// nightlyReport:1:everyNight:timer timer-start-event CYCLE: R3/2030-01-01T02:00:00Z/P1D
	// first due 2030-01-01T02:00:00Z priority 3 type timer
}
