package liveness

import (
	"fmt"
	"time"
)

// Defaults of Config. With them a dead client's jobs are given back at most
// about 4.5 s after it died: its lock goes at once, the next ping of any
// live client (PingInterval) records it, the takeover waits TakeoverAfter
// and runs on the leader's next check (CheckInterval).
const (
	DefaultPingInterval  = 500 * time.Millisecond
	DefaultFenceAfter    = 2 * time.Second
	DefaultCancelGrace   = time.Second
	DefaultCheckInterval = time.Second
)

// Config configures client liveness. The zero value is on, with the
// defaults above.
type Config struct {
	// Disabled switches liveness off for every client of the engine: a
	// crashed client's running jobs then wait for River's rescuer
	// (RescueStuckJobsAfter, an hour by default) and use up an attempt, and
	// their exclusive keys stay held as long. Liveness costs each client that
	// works jobs one database connection of its own (outside its pool),
	// holding one advisory lock, and one statement every PingInterval on it;
	// the leader runs one more statement every CheckInterval.
	Disabled bool

	// PingInterval is how often a client proves it is alive (0 means
	// DefaultPingInterval).
	PingInterval time.Duration

	// FenceAfter bounds how long a client keeps working without proof that
	// it is alive: when no ping sent within the last FenceAfter succeeded,
	// it cancels its running jobs (0 means DefaultFenceAfter). It must
	// exceed PingInterval.
	FenceAfter time.Duration

	// CancelGrace is how long a worker gets to return after its context is
	// cancelled by a fence (0 means DefaultCancelGrace).
	CancelGrace time.Duration

	// TakeoverAfter is how long after a session was first seen dead its jobs
	// are given back (0 means FenceAfter + CancelGrace, the least Validate
	// accepts).
	TakeoverAfter time.Duration

	// CheckInterval is how often the leader looks for dead sessions whose
	// jobs are due to be given back (0 means DefaultCheckInterval).
	CheckInterval time.Duration
}

// WithDefaults returns c with every zero duration replaced by its default.
func (c Config) WithDefaults() Config {
	if c.PingInterval == 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.FenceAfter == 0 {
		c.FenceAfter = DefaultFenceAfter
	}
	if c.CancelGrace == 0 {
		c.CancelGrace = DefaultCancelGrace
	}
	if c.TakeoverAfter == 0 {
		c.TakeoverAfter = c.FenceAfter + c.CancelGrace
	}
	if c.CheckInterval == 0 {
		c.CheckInterval = DefaultCheckInterval
	}
	return c
}

// Validate reports the first field of c (after defaults) whose value breaks
// the timing argument of the package documentation.
func (c Config) Validate() error {
	d := c.WithDefaults()
	for _, f := range []struct {
		name  string
		value time.Duration
	}{
		{"PingInterval", c.PingInterval}, {"FenceAfter", c.FenceAfter}, {"CancelGrace", c.CancelGrace},
		{"TakeoverAfter", c.TakeoverAfter}, {"CheckInterval", c.CheckInterval},
	} {
		if f.value < 0 {
			return fmt.Errorf("liveness: Config.%s must not be negative, got %s", f.name, f.value)
		}
	}
	if d.FenceAfter <= d.PingInterval {
		return fmt.Errorf("liveness: Config.FenceAfter (%s) must exceed PingInterval (%s), or every pause between pings fences the client", d.FenceAfter, d.PingInterval)
	}
	if d.TakeoverAfter < d.FenceAfter+d.CancelGrace {
		return fmt.Errorf("liveness: Config.TakeoverAfter (%s) must be at least FenceAfter + CancelGrace (%s): a cut-off client must have stopped its jobs before they are given back", d.TakeoverAfter, d.FenceAfter+d.CancelGrace)
	}
	return nil
}
