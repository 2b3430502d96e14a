package jobcontrol

import (
	"fmt"
	"time"
)

// Config is the settings of running jobs' progress in an engine
// (workflow.Config.JobControl).
type Config struct {
	// ProgressInterval is the shortest time between two writes of a
	// running job's progress (handlers.Progress); 0 means
	// DefaultProgressInterval.
	ProgressInterval time.Duration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.ProgressInterval < 0 {
		return fmt.Errorf("ProgressInterval must not be negative, got %s", c.ProgressInterval)
	}
	return nil
}
