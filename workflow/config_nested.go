package workflow

import "fmt"

// nestRetryAndPriority returns a copy of config whose nested Retry and
// Priority settings hold what the deprecated flat fields set
// (DefaultRetryCycle, DisablePrioritizedJobs): a flat field is honoured
// when its nested field is zero, and a configuration that sets both to
// different values is refused, naming both.
func nestRetryAndPriority(config *Config) (*Config, error) {
	c := *config
	switch {
	case c.DefaultRetryCycle == "":
	case c.Retry.DefaultCycle == "":
		c.Retry.DefaultCycle = c.DefaultRetryCycle
	case c.Retry.DefaultCycle != c.DefaultRetryCycle:
		return nil, fmt.Errorf("workflow: Config.Retry.DefaultCycle %q and the deprecated Config.DefaultRetryCycle %q differ: set Retry.DefaultCycle only",
			c.Retry.DefaultCycle, c.DefaultRetryCycle)
	}
	c.DefaultRetryCycle = c.Retry.DefaultCycle
	// A bool set in either place is true: no two values can conflict.
	c.Priority.Disabled = c.Priority.Disabled || c.DisablePrioritizedJobs
	c.DisablePrioritizedJobs = c.Priority.Disabled
	return &c, nil
}
