// Package jobcontrol is what riverbpmn does to running jobs: progress
// reporting with throttled writes, and stop requests (the CNES REGARDS jobs module's stopJob).
//
// Progress. A worker reports progress through a Reporter (workers get theirs
// with handlers.Progress): it declares a total and advances. Advancing only
// touches memory; the value is written to the job's metadata under
// ProgressMetadataKey at most once per interval (one second by default), by
// a goroutine that exists only while the job reports progress, and once more
// when the work returns. River UI shows it with the job's metadata.
//
// Stop. Stop asks jobs to stop, the way River's JobCancel does, for one job,
// a list, or every job of a process instance, in one statement: a job
// waiting to run is cancelled at once (it never starts); a running job is
// marked with River's "cancel_attempted_at" metadata and the client running
// it, in whatever process, is notified on River's control channel and cancels
// the job's context (River also polls for the marker, so a lost notification
// only delays it); a finished job is left as it is, and the result says so.
//
// ABORTED, in River terms, is state cancelled with "cancel_attempted_at" in
// metadata. A job that cancelled itself (river.JobCancel from its work) has
// no marker and counts as FAILED. WorkStop, on the work path, makes a job
// whose stop reached it end cancelled whatever its work returned, and closes
// the race where a stop arrives just as the last attempt fails, so an
// aborted job is never discarded and never opens an incident.
package jobcontrol
