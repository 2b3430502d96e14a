// Package workflow is riverbpmn's front door: the engine that gives River
// jobs the job-executor semantics of the BPMN engines (Camunda 7, Flowable,
// Activiti, jBPM) and of the CNES REGARDS jobs module, without running BPMN
// diagrams. Your code decides what happens next, as with any River job;
// riverbpmn decides how each job is executed.
//
// # The one wiring path
//
// Migrate, declare the process and its job definitions in an [Engine], and
// build River clients with [NewClient]:
//
//	if _, err := workflow.MigrateUp(ctx, dbPool, &workflow.MigrateOpts{Schema: schema}); err != nil {
//		panic(err)
//	}
//
//	engine, err := workflow.NewEngine(dbPool, &workflow.Config{
//		Schema:             schema,
//		ProcessDefinitions: []workflow.ProcessDefinition{{Key: "order_fulfilment"}},
//		JobDefinitions: []workflow.JobDefinition{
//			{ID: "charge-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "charge", Kind: "charge_card", RetryCycle: "R3/PT1S"},
//			{ID: "pack-async", ProcessDefinitionKey: "order_fulfilment", ActivityID: "pack", Kind: "pack_parcel"},
//		},
//		// ...
//	})
//	// ...
//	client, err := workflow.NewClient(engine, &river.Config{
//		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
//		Workers:           workers,
//		// ...
//	})
//
// NewClient is river.NewClient on the engine's [Driver] with
// [Engine.ClientConfig], which adds the engine's middleware, retry policy,
// schema and a logger to a copy of your config. A client on the engine's
// driver without the middleware refuses to start and to insert
// ([ErrClientNotWired]). The code above is taken from the README's first
// program (examples/firstprogram), which the test suite runs, and `make
// docs-check` keeps the two identical.
//
// # Jobs and their job context
//
// A job's BPMN identity is its [JobContext]: process instance, process
// definition, activity, job definition, deployment, tenant. Typed args carry
// it with a JobContext method, or an insert gives it with
// [JobContext.InsertOpts]; all six River insert calls validate it and fail
// with an error naming the field and the value. The job definition
// ([JobDefinition]) gives the job its activity, priority, retry cycle and
// exclusivity; [JobContextOf] reads the context back in a worker.
//
// # Defaults
//
// What Camunda does without configuration, riverbpmn does without
// configuration. Exclusive jobs are enforced per process instance
// ([Config].ExclusiveScope; exclusive.None opts out), the scope in force is
// recorded in the database so every client and tool of a schema agrees, and
// a crashed client's jobs are given back without using a retry
// ([Config].Liveness). Retries follow the job definition's retry cycle, or
// [Config].Retry.DefaultCycle.
//
// # Features and where they live
//
// The engine's feature handles (below) are the management API (the
// riverbpmn CLI and the console call them); each feature's mechanism and
// reference text live in its own package:
//
//   - [github.com/riverbpmn/riverbpmn/retrypolicy]: ISO 8601 retry time
//     cycles and Camunda's retry bookkeeping;
//   - [github.com/riverbpmn/riverbpmn/priority]: priority sources and
//     ranges;
//   - [github.com/riverbpmn/riverbpmn/exclusive]: exclusive keys and scopes;
//   - [github.com/riverbpmn/riverbpmn/timer] and
//     [github.com/riverbpmn/riverbpmn/handlers]: timers, asynchronous
//     continuations and progress, for worker authors;
//   - [github.com/riverbpmn/riverbpmn/suspension]: suspension and
//     activation, now or scheduled;
//   - [github.com/riverbpmn/riverbpmn/hold]: held jobs and their reasons;
//   - [github.com/riverbpmn/riverbpmn/lifecycle]: pending jobs,
//     prerequisites and expiration;
//   - [github.com/riverbpmn/riverbpmn/jobcontrol] and
//     [github.com/riverbpmn/riverbpmn/events]: progress, stop requests and
//     job status events;
//   - [github.com/riverbpmn/riverbpmn/liveness]: crashed clients;
//   - [github.com/riverbpmn/riverbpmn/bpmn] and
//     [github.com/riverbpmn/riverbpmn/deployment]: job definitions read from
//     BPMN models, in versioned deployments ([Engine.Deployments]);
//   - [github.com/riverbpmn/riverbpmn/console]: the operators' web console.
//
// # Feature handles
//
// As River's Client.Queues, the engine hands out one handle per feature,
// bound to its pool and schema once; each listing is one List with a
// ListParams (filters, Limit, the cursor After) and a ListResult (Items,
// and Next, empty on the last page). The engine's former per-feature
// methods stay for one release as deprecated forwards to them.
//
//   - [Engine.Deployments]: deployed BPMN models (package deployment);
//   - [Engine.Events]: job status events (package events);
//   - [Engine.Timers]: timers (package timer);
//   - [Engine.Suspensions]: suspension and activation (package suspension);
//   - [Engine.Bulk]: bulk actions and bulk operations (package bulk);
//   - [Engine.Lifecycle]: pending jobs and prerequisites (package lifecycle);
//   - [Engine.Jobs]: jobs: search, status, retries, priority, stop (package
//     job);
//   - [Engine.Incidents]: incidents (package incident);
//   - [Engine.Exclusive]: exclusive jobs: held keys, waits, the scope and
//     mechanism in force, head-of-key indexes (package exclusive);
//
// Acquisition options (by priority, timers first, due date, priority range,
// deployment, fairness across tenants) are described by [Acquisition].
//
// # River version
//
// riverbpmn pins River v0.51.1: it plugs into River's driver-plugin seam,
// which River marks internal. Every use of it is in seam.go, with
// compile-time assertions that break the build if the seam moves.
//
// The guides (docs/guides in the repository) walk through each feature;
// docs/operating covers the CLI, the console, River UI and upgrading.
package workflow
