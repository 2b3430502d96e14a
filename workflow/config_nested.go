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

// nestExclusive returns config with Config.Exclusive and the deprecated
// flat fields it replaces (ExclusiveScope, ExclusiveLookahead,
// ExclusiveWakeCooldown, ExclusiveBatch) agreeing: a flat field is honoured
// when its nested one is zero, and the two set to different values is an
// error naming both. The scope's zero value (ProcessInstance) is its
// default, so a flat ExclusiveScope overrides a nested one left at (or set
// to) that default.
func nestExclusive(config *Config) (*Config, error) {
	c := *config
	x := &c.Exclusive
	if c.ExclusiveScope != 0 {
		if x.Scope != 0 && x.Scope != c.ExclusiveScope {
			return nil, fmt.Errorf("workflow: Config.Exclusive.Scope %s and the deprecated Config.ExclusiveScope %s differ: set Exclusive.Scope only", x.Scope, c.ExclusiveScope)
		}
		x.Scope = c.ExclusiveScope
	}
	if c.ExclusiveLookahead != 0 {
		if x.Lookahead != 0 && x.Lookahead != c.ExclusiveLookahead {
			return nil, fmt.Errorf("workflow: Config.Exclusive.Lookahead %d and the deprecated Config.ExclusiveLookahead %d differ: set Exclusive.Lookahead only", x.Lookahead, c.ExclusiveLookahead)
		}
		x.Lookahead = c.ExclusiveLookahead
	}
	if c.ExclusiveWakeCooldown != 0 {
		if x.WakeCooldown != 0 && x.WakeCooldown != c.ExclusiveWakeCooldown {
			return nil, fmt.Errorf("workflow: Config.Exclusive.WakeCooldown %s and the deprecated Config.ExclusiveWakeCooldown %s differ: set Exclusive.WakeCooldown only", x.WakeCooldown, c.ExclusiveWakeCooldown)
		}
		x.WakeCooldown = c.ExclusiveWakeCooldown
	}
	if c.ExclusiveBatch != 0 {
		if x.Batch != 0 && x.Batch != c.ExclusiveBatch {
			return nil, fmt.Errorf("workflow: Config.Exclusive.Batch %d and the deprecated Config.ExclusiveBatch %d differ: set Exclusive.Batch only", x.Batch, c.ExclusiveBatch)
		}
		x.Batch = c.ExclusiveBatch
	}
	// The engine reads the flat fields; they carry the nested values.
	c.ExclusiveScope, c.ExclusiveLookahead, c.ExclusiveWakeCooldown, c.ExclusiveBatch = x.Scope, x.Lookahead, x.WakeCooldown, x.Batch
	return &c, nil
}
