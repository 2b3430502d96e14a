package liveness

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Defaults of Config. With them a dead client's jobs are given back at most
// about 4.5 s after it died: its lock goes at once, the next ping of any
// live client (PingInterval) records it, the takeover waits TakeoverAfter
// and runs on the leader's next check (CheckInterval). A client that is
// alive but does not ping (frozen, starved, cut off) keeps its jobs for
// StallAfter (30 s) before its session is declared dead.
const (
	DefaultPingInterval  = 500 * time.Millisecond
	DefaultFenceAfter    = 2 * time.Second
	DefaultCancelGrace   = time.Second
	DefaultCheckInterval = time.Second
	DefaultStallAfter    = 30 * time.Second
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

	// StallAfter is how long a client whose connection is up may go without
	// a ping before the other clients declare its session dead (and end its
	// connection): a process frozen (a GC pause, CPU starvation, a VM
	// paused, SIGSTOP) for less keeps its jobs and resumes them; frozen for
	// longer, its jobs are given back TakeoverAfter later, and it fences
	// itself when it runs again. It also bounds how long the database keeps
	// the session of a client whose network went silently away (TCP
	// keepalives and user timeout on the session's connection are derived
	// from it). 0 means DefaultStallAfter. It must exceed FenceAfter.
	StallAfter time.Duration

	// ConnConfig, when set, is the connection each client holds its session
	// on, instead of one opened with the engine pool's settings. The session
	// is a session-level advisory lock, which needs a connection that is
	// one PostgreSQL backend for its whole life: behind a transaction-mode
	// pooler (PgBouncer's pool_mode=transaction or statement), point it at
	// PostgreSQL directly (or at a session-mode pool). A client whose
	// session connection turns out to be pooled refuses to start.
	ConnConfig *pgx.ConnConfig
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
	if c.StallAfter == 0 {
		c.StallAfter = DefaultStallAfter
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
		{"TakeoverAfter", c.TakeoverAfter}, {"CheckInterval", c.CheckInterval}, {"StallAfter", c.StallAfter},
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
	if d.StallAfter <= d.FenceAfter+d.PingInterval {
		return fmt.Errorf("liveness: Config.StallAfter (%s) must exceed FenceAfter + PingInterval (%s): a live client's session would be declared stalled between two pings", d.StallAfter, d.FenceAfter+d.PingInterval)
	}
	return nil
}
