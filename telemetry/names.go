package telemetry

// The names of riverbpmn's instruments. Package doc lists each with its unit,
// attributes and meaning.
const (
	NameFetches           = "riverbpmn.acquisition.fetches"
	NameJobsTaken         = "riverbpmn.acquisition.jobs"
	NameExclusiveWait     = "riverbpmn.exclusive.wait"
	NameKeyHeld           = "riverbpmn.exclusive.hold_duration"
	NameRetries           = "riverbpmn.retries"
	NameConflicts         = "riverbpmn.conflicts"
	NameIncidentsOpened   = "riverbpmn.incidents.opened"
	NameIncidentsResolved = "riverbpmn.incidents.resolved"
	NameTimerLateness     = "riverbpmn.timer.lateness"
	NameSessions          = "riverbpmn.liveness.sessions"
	NameFences            = "riverbpmn.liveness.fences"
	NameTakeovers         = "riverbpmn.liveness.takeovers"
	NameJobsGivenBack     = "riverbpmn.liveness.jobs_given_back"
	NameJobsExpired       = "riverbpmn.jobs.expired"

	// Figures from the database, read by the elected leader.
	NameIncidentsOpen        = "riverbpmn.incidents.open"
	NameOldestAvailable      = "riverbpmn.queue.oldest_available_age"
	NameDeadKeys             = "riverbpmn.exclusive.dead_client_keys"
	NameDeadSessions         = "riverbpmn.liveness.dead_sessions"
	NameJobsHeld             = "riverbpmn.jobs.held"
	NameDefinitionsSuspended = "riverbpmn.definitions.suspended"
	NameSubscriptionBehind   = "riverbpmn.events.subscription.behind"
)
