package retrypolicy

// Config is the engine-wide retry setting, nested in the engine's
// configuration as Retry (workflow.Config.Retry).
type Config struct {
	// DefaultCycle is the engine-wide ISO-8601 retry time cycle (Camunda's
	// failedJobRetryTimeCycle), such as "R5/PT5M" or "PT10M,PT17M,PT20M". It
	// applies to jobs whose job definition declares no cycle, and also to
	// plain River jobs (jobs without a job context), which otherwise keep
	// River's own retry behaviour (a plain job's cycle is recorded in its
	// metadata; it gets no incidents). A job's cycle sets its River
	// MaxAttempts at insert, replacing any given in InsertOpts. A plain
	// River job gets the default cycle only when its MaxAttempts is River's
	// default (river.MaxAttemptsDefault): one whose InsertOpts, args or
	// client chose MaxAttempts keeps it, and River's retries. Empty means
	// none. The engine rejects an invalid cycle (ParseCycle) when it is
	// built.
	DefaultCycle string
}
