// Package timer is riverbpmn's timer feature: BPMN timer definitions (an
// ISO-8601 date, duration or repeating interval, or a cron expression in
// Spring's dialect, as Camunda 7.24 reads them), the due dates they produce,
// and the table river_bpmn_timer with the statements that run a timer's
// lifecycle (create, fire, move a due date, cancel, list).
//
// It takes a small database interface (pgx transactions) and never imports
// package workflow: workflow's management methods and package handlers'
// middleware call it.
//
// # Due dates
//
// A date fires once at the date; a duration once, that long after the timer
// is created; a cycle repeatedly. For a cycle, the next due date after a
// firing is the first candidate strictly after base = max(now, the firing's
// due date), so missed candidates are skipped. ISO-8601 candidates are those
// of retrypolicy.RepeatingInterval (Rn/P anchored at the creation: anchor +
// k·P, k = 1..n; Rn/<start>/P: start + k·P, k = 0..n; Rn/P/<end>: end −
// k·P), plus R[n]/<start>/P/<end>, whose candidates stop at the end date.
// A repeat offset (the sum of the moves of due dates made with cascade)
// shifts every candidate of an ISO-8601 cycle: the next due date is
// Next(base − offset) + offset. Cron candidates ignore the offset. An
// occurrence beyond year MaxYear ends the cycle.
//
// # Occurrences
//
// Each occurrence is a River job. Its timer metadata (MetadataKey) carries
// the timer's Template, from which Fire has the next occurrence inserted
// (an InsertFunc, through River's client) so that it gets the settings in
// force at its creation; without one it copies the firing job. An
// occurrence due within NearDue of its creation is inserted 'available'
// with its future scheduled_at (River's fetch waits for it), so it does not
// wait for River's job scheduler's next pass; a due date moved with
// SetDueDate follows the same rule.
package timer
