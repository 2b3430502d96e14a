package exclusive

import "time"

// Config is the exclusive jobs' settings in an engine
// (workflow.Config.Exclusive). The zero value enforces exclusivity per
// process instance with the lock table, one job per key.
type Config struct {
	// Scope is what a job is exclusive on: the zero value ProcessInstance
	// (as in Camunda), RootProcessInstance (a called sub-process shares its
	// root's key), or None to opt out. The scope in force is recorded in the
	// schema, and a client whose engine has another one refuses to start.
	Scope Scope

	// Lookahead bounds how many available jobs one fetch looks at to find
	// jobs whose key is free (0 means DefaultLookahead).
	Lookahead int

	// WakeCooldown is the shortest time between two notifications that wake
	// a queue's producers when a key is given back while jobs of that key
	// wait (0 means DefaultWakeCooldown).
	WakeCooldown time.Duration

	// Batch, above 1, makes a fetch take runs of up to Batch exclusive jobs
	// of one key, run one after another holding the key once (at most
	// MaxBatch); 0 or 1 takes one job per key.
	Batch int
}
