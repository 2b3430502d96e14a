package priority

// Config is the engine-wide priority setting, nested in the engine's
// configuration as Priority (workflow.Config.Priority).
type Config struct {
	// Disabled switches prioritised job creation off: every job gets
	// priority 0 and overriding priorities are not applied at insert
	// (Camunda's producePrioritizedJobs=false).
	Disabled bool
}
