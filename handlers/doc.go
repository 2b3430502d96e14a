// Package handlers holds what a River worker author uses to run BPMN steps
// with riverbpmn: durable timers (BPMN timer events with Camunda 7's timer
// lifecycle) and asynchronous continuations. It is built on package workflow
// (job contexts, the engine's driver) and package timer (definitions, the
// timer table and its SQL).
//
// # Timers
//
// A timer is a row in river_bpmn_timer plus, for each of its occurrences,
// a River job of the args' kind whose job context has JobType
// workflow.JobTypeTimer (so Acquisition.TimersFirst, priorities, retry
// cycles and exclusivity apply as to any job). Insert one with
// Timers.InsertTx in the caller's transaction:
//
//	timers := handlers.NewTimers(dbPool, &handlers.TimersConfig{Schema: schema})
//	client, _ := workflow.NewClient(engine, &river.Config{
//		Middleware: []rivertype.Middleware{timers.Middleware()},
//		...
//	})
//	res, err := timers.InsertTx(ctx, client, tx, ReminderArgs{Order: "42"},
//		handlers.Timer{Cycle: "R3/PT10H"}, jobContext.InsertOpts())
//
// The definition is a date (ISO-8601 date-time), a duration (PT5M from
// now) or a cycle: an ISO-8601 repeating interval (R3/PT10H anchored at the
// insertion, R/PT1H unbounded, R3/<start>/PT1H, Rn/PT1H/<end>,
// R/<start>/P1D/<end>) or a cron expression in the dialect Camunda 7.24
// reads, Spring's (see timer.Cron). Bad input is rejected at insert, naming
// the value: a cycle or cron that does not parse, a date in a form Camunda
// rejects, R0, a definition with no occurrence from now on.
//
// # The lifecycle of a cycle
//
// When an occurrence starts, Timers.Middleware creates the next one before
// the worker runs, in a transaction of its own that locks the timer row,
// scheduled at the next due date, with the repetitions left reduced. The
// next occurrence is a new job created with the settings in force at its
// creation, as in Camunda: it keeps its predecessor's args, kind, queue,
// tags, River priority and other metadata, and it is inserted through the
// River client running the firing (river.ClientFromContext), from the
// timer's template (the job context as given to InsertTx, job type timer,
// and the MaxAttempts asked for), so that the engine resolves its job
// context again: the job definition's declared priority, or its overriding
// priority while one is set (none once cleared), its retry cycle (and max
// attempts), exclusivity, deployment and tenant; and the insert triggers
// insert it suspended while its job definition, process definition or
// process instance is suspended. Lifecycle options of the first insert
// (expiry, prerequisites) and per-run metadata are not carried over. A
// timer inserted before templates existed, or a firing run without a River
// client in its context, creates a copy of the firing job instead.
//
// An occurrence due within timer.NearDue (twice River's job scheduler
// interval) of its creation is inserted 'available' with its future
// scheduled_at: River's fetch (and every riverbpmn fetch plan) takes only
// available jobs whose scheduled_at has passed, so it starts at the first
// fetch after its due date, within one fetch poll interval (plus the
// cooldown) at River's defaults, instead of at the job scheduler's next
// pass (up to 5 s late). Later occurrences are 'scheduled', and the
// scheduler's look-ahead makes them available before their due date
// (TestTimerLatenessMeasured measures the lateness).
//
// Camunda's rules of a cycle follow:
//
//   - a firing that fails does not stop the cycle: the next occurrence
//     exists already; the failed one follows its own retry cycle, and its
//     retries create nothing;
//   - missed slots are skipped, not caught up: the next due date is the
//     first candidate after max(now, the firing's due date);
//   - an occurrence fired early by hand (workflow.Engine.ExecuteJob) counts
//     from its own due date, kept under workflow.ExecutedDueMetadataKey: the
//     next occurrence is due one period after it, and its slot does not
//     fire again;
//   - the cycle ends after its last repetition or its end date, or when
//     the next occurrence lies beyond year 9999 (timer.MaxYear);
//   - moving a due date with cascade (workflow.Engine.SetTimerDueDate) adds
//     the move to the timer's repeat offset, which every later occurrence of
//     an ISO-8601 cycle keeps (R2/PT30M moved +15m: +45m, then +75m); cron
//     cycles are not shifted.
//
// Creating the next occurrence when the firing starts, rather than when it
// completes, is what makes a failing firing keep the cycle going and makes
// crashes safe: a process killed after that commit leaves the next
// occurrence in place; one killed before leaves the occurrence running, and
// the run River's rescuer gives it creates it then. "Exactly one next
// occurrence" is enforced by the database, not only by Go: occurrences
// after the first carry River's unique_key 'riverbpmn-timer:<id>:<n>',
// unique in every state through River's own unique index, so a second copy
// of an occurrence cannot be inserted whatever runs twice.
//
// # Asynchronous continuations
//
// ContinueTx is how a step hands over to the next in the River way: in the
// worker's own transaction it inserts the next step of the same process
// instance (job context carried forward by NextJobContext) and completes
// the running job with river.JobCompleteTx. Commit, and both happen; crash
// before, and neither does.
//
// # Cron library
//
// River uses github.com/robfig/cron, which has no L, W or #. Three Go
// libraries that have them were evaluated with the vectors of
// timer/cron_test.go:
//
//   - github.com/reugn/go-quartz (chosen): maintained, MIT, no dependencies,
//     Quartz dialect with seconds, L, L-n, W, LW, nL, n#k, years up to 3940.
//     Quartz numbers the day of week 1 = Sunday, so timer.ParseCron
//     translates Spring's 0/7 = Sunday first; Quartz refuses two
//     restricting day fields, so Spring's "both must match" is evaluated by
//     intersecting two triggers; go-quartz rolls 30 February over into
//     March, so answers for plain day-of-month lists are checked.
//   - github.com/hashicorp/cronexpr (maintained fork of gorhill/cronexpr):
//     day of week 0-7 as Spring, L, W, LW, #, but no L-n, and years only up
//     to 2099.
//   - github.com/adhocore/gronx: L, W, # but no L-n or LW, Unix "either day
//     field" semantics, and a next-time search that gives up after 500
//     steps.
//
// # Cost
//
// Jobs that are not timers cost one bytes.Contains on their metadata in the
// middleware, and nothing in the database: no trigger, no index on
// river_job, no clause in the fetch. A timer costs one row in
// river_bpmn_timer and, per occurrence, one transaction (lock the row,
// insert the copy, update the row).
package handlers
