// Package overview reads what the console's overview page shows, each
// figure from the database in one statement (sql/*.sql): the unfinished
// jobs per process definition and job definition by state, those held by
// reason and those waiting on an exclusive key another job holds, open
// incidents per job definition, River's queues with their jobs and whether
// a client works them, and jobs completed and discarded and incidents
// opened per time bucket. It reads only the states it counts, through
// River's and riverbpmn's indexes, never the completed jobs one by one.
// The Overviews handle (workflow.Engine.Overviews) reads it for the scope
// in force in the schema.
package overview
