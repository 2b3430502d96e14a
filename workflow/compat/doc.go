// Package compat holds riverbpmn's River compatibility suite, in its tests:
// each River feature a River application uses is run twice, once on a
// client of stock River (river.NewClient on River's pgx driver) and once on
// a client of workflow.NewClient with an engine that declares nothing, and
// what the application can observe (its workers', middleware's, hooks' and
// handlers' calls, the events it subscribes to, the jobs' final rows, the
// retry and snooze timing, what is logged) must be the same.
//
// It is the proof of riverbpmn's first promise: a River application that
// switches to workflow.NewClient sees no change. The package has no code of
// its own.
package compat
