// Package telemetry is riverbpmn's OpenTelemetry instrumentation: every
// instrument the engine records, their names, units and attributes, the
// span attributes of a job's work, and the figures only the database knows,
// which the elected leader reports.
//
// It uses OpenTelemetry's API only (go.opentelemetry.io/otel/metric and
// trace). The application brings the providers: workflow.Config.Telemetry's
// MeterProvider, or the global one (otel.SetMeterProvider) when it is nil,
// as River's rivercontrib/otelriver does. With no provider set anywhere the
// global provider's instruments are no-ops: the calls that would read a
// job's context check their instruments' Enabled first and return, and no
// collection ever asks the database for the figures.
//
// With a provider, measuring a job allocates nothing once its attributes
// have been seen: ContextReader, the engine's JobReader, reads a job's
// Class (the bounded fields of its context) from its metadata's bytes, and
// each combination of attributes is made into an attribute set and options
// once and kept (up to 10,000 combinations; past that they are made per
// measurement). A fetch counts the jobs of one combination with one
// addition. Only a span that records reads the job's whole Identity.
//
// # Instruments
//
// Counters and histograms recorded by the engine's clients (names prefixed
// riverbpmn., units in OpenTelemetry's notation, durations in seconds):
//
//	riverbpmn.acquisition.fetches       counter {fetch}   fetches of a queue, empty ones included
//	riverbpmn.acquisition.jobs          counter {job}     jobs taken by fetches (moved to running)
//	riverbpmn.acquisition.keys_held_skipped counter {job} candidates passed over because their key was held
//	riverbpmn.exclusive.wait            histogram s       due to start of each job that took an exclusive key
//	riverbpmn.exclusive.hold_duration   histogram s       work start to key given back, per job that held a key
//	riverbpmn.retries                   counter {retry}   failed executions River retries, by retry cycle
//	riverbpmn.conflicts                 counter {conflict} conflict failures that gave their execution back
//	riverbpmn.incidents.opened          counter {incident} incidents opened by the engine's clients and calls
//	riverbpmn.incidents.resolved        counter {incident} incidents resolved by SetJobRetries and bulk retries
//	riverbpmn.timer.lateness            histogram s       due to start of each timer occurrence's first execution
//	riverbpmn.liveness.sessions         counter {session} liveness sessions opened by this process's clients
//	riverbpmn.liveness.fences           counter {fence}   sessions fenced: the client cancelled its jobs
//	riverbpmn.liveness.takeovers        counter {takeover} dead clients taken over (by the leader)
//	riverbpmn.liveness.jobs_given_back  counter {job}     running jobs of dead clients given back
//	riverbpmn.jobs.expired              counter {job}     jobs discarded because they expired unstarted
//
// Attributes are bounded: queue and kind (River's names, as otelriver's),
// riverbpmn.job_definition and riverbpmn.process_definition (declared
// names), riverbpmn.acquisition.order on the acquisition instruments (the
// client's order: river, or its options joined by "+", such as
// timers_first+priority or fair), riverbpmn.retry_cycle on retries and
// conflicts, riverbpmn.expired_by ("leader" for the leader's expiry service,
// "work" for a client that fetched an expired job). riverbpmn.tenant is
// added to riverbpmn.acquisition.jobs only with Config.TenantAttribute: the
// share of each tenant, for fair fetching, at the price of one series per
// tenant.
//
// What each one sees, exactly:
//
//   - A job's wait on its key. A job's row tells when it became due
//     (scheduled_at) and when its fetch took it (attempted_at), both by the
//     database's clock; it does not tell whether its key was held meanwhile,
//     and the fetch overwrites the key's lock row. So
//     riverbpmn.exclusive.wait is due-to-start for jobs that took a key: it
//     is the key wait plus the queue's own wait (worker slots, fetch
//     interval). A queue's non-exclusive wait is otelriver's and River's
//     queue latency; a growing gap between the two is keys held.
//     riverbpmn.exclusive.hold_duration is measured by the client's clock
//     from the job's work start to the key being given back (the fetch took
//     the key a moment earlier).
//   - Outcomes. The work middleware's outermost layer sees the error River
//     gets: a failure of a job's last execution is an incident (for a job
//     with a job context: River discards it and the database opens one),
//     any other failure is a retry. Snoozes, cancellations and successes
//     count nothing. Jobs River fails without running them (an unknown
//     kind), and jobs its rescuer discards, are not counted by any client:
//     riverbpmn.incidents.open, read from the database, counts every open
//     incident whatever opened it.
//   - Timers. The lateness of an occurrence is its first execution's start
//     minus its due time; a retried occurrence's later executions are
//     retries, not lateness.
//   - Liveness. Sessions and fences are counted by the client that opens or
//     loses them; takeovers and the jobs they give back by the leader.
//
// # Span attributes
//
// Instruments.Hook is a River hook (workflow.NewClient adds it to every
// client) that gives the span of a job's work the job's identity:
// riverbpmn.process_instance_id, riverbpmn.activity_id,
// riverbpmn.job_definition_id, riverbpmn.process_definition_key,
// riverbpmn.tenant_id; for a job that took an exclusive key,
// riverbpmn.exclusive.key and riverbpmn.exclusive.wait (seconds, due to
// start, as above); for a timer occurrence's first execution,
// riverbpmn.timer.lateness. River runs hooks inside every middleware, so the
// span is otelriver's wherever its middleware is in the list, or any span
// the application started around the work. A job without a recording span
// costs one context lookup.
//
// # Figures from the database
//
// Some figures no client knows: they are observable gauges whose callback
// reads the database (sql/figures.sql) on the elected leader only, at most
// once per Config.FiguresInterval (30 s by default: collections in between
// get the figures read last), within 5 s:
//
//	riverbpmn.incidents.open                 gauge {incident}   open incidents, by riverbpmn.job_definition
//	riverbpmn.queue.oldest_available_age     gauge s            how long the oldest available job of each queue has been due
//	riverbpmn.liveness.dead_sessions         gauge {session}    dead clients not yet taken over
//	riverbpmn.exclusive.dead_client_keys     gauge {key}        exclusive keys held by running jobs of dead clients
//	riverbpmn.jobs.held                      gauge {job}        held jobs, by riverbpmn.hold.reason
//	riverbpmn.definitions.suspended          gauge {definition} suspended definitions, by riverbpmn.definition.type
//	riverbpmn.events.subscription.behind     gauge {event}      events a named subscription has yet to handle, by riverbpmn.subscription
//
// Why the leader and not the console's /metrics: the figures then go
// wherever the application's other measurements go (OTLP, Prometheus,
// anything the SDK exports to), with no extra process or port, and exactly
// one client of a database reads them (River elects it; Instruments.Leader
// is the service River runs there). Each part of the statement reads an
// index or a small table: open incidents through their partial index, four
// index probes per queue for the oldest available job, the lock table's held
// rows and the session table, the hold reason index, the suspension table;
// the subscriptions' count grows with how far behind they are, bounded by
// the outbox's retention. A negative FiguresInterval reads none.
package telemetry
