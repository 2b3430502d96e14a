package liveness

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ErrNotLive is returned by Keeper.Begin while the client has no live
// session: it is between a fence and its next session.
var ErrNotLive = errors.New("liveness: this client has no live session (it lost its liveness and is opening a new one)")

// KeeperConfig is what a Keeper needs besides Config.
type KeeperConfig struct {
	// ConnConfig opens the session's dedicated connection (not from a pool:
	// the lock lives exactly as long as this one connection).
	ConnConfig *pgx.ConnConfig
	// Schema holds riverbpmn's and River's tables ("" = search_path).
	Schema string
	// ClientID is River's client id.
	ClientID string
	// Logger receives the Keeper's warnings.
	Logger *slog.Logger
	// OnLost is called when session generation gen is fenced. It must cancel
	// every job fetched under a generation <= gen, and make sure their
	// outcomes are never written. It is called once per generation, never
	// concurrently with itself.
	OnLost func(gen uint64)
}

// Keeper is one client's proof of life: a session (a row and an advisory
// lock on a dedicated connection) that it pings, fences when it cannot prove
// it is alive, and replaces by a new one. Fetches and completions run between
// Begin and End: Begin says under which session generation, and gives them
// the session's deadline. See the package documentation for the timing
// argument.
type Keeper struct {
	cfg  Config
	kc   KeeperConfig
	lock int32 // the advisory lock's first key, from the schema

	// ops is held for reading by every fetch and completion under way, and
	// for writing by the Keeper between two sessions (to wait for them).
	ops sync.RWMutex

	mu       sync.Mutex
	closed   bool      // Close was called
	gen      uint64    // the live session's generation; 0 before the first
	live     bool      // whether gen is live
	deadline time.Time // gen's fence deadline (monotonic)
	fenced   atomic.Uint64
	conn     *pgx.Conn
	session  int64
	pid      int32

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	Sessions atomic.Int64 // sessions opened, for tests and logs
}

// NewKeeper returns a Keeper; Open starts it.
func NewKeeper(cfg Config, kc KeeperConfig) *Keeper {
	h := fnv.New32a()
	_, _ = h.Write([]byte("riverbpmn liveness\x00" + kc.Schema))
	if kc.Logger == nil {
		kc.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{
		cfg:  cfg.WithDefaults(),
		kc:   kc,
		lock: int32(h.Sum32() & 0x7fffffff), //nolint:gosec // masked to 31 bits
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// Open opens the first session and starts pinging it. An error means the
// client could not prove it is alive and must not fetch.
func (k *Keeper) Open(ctx context.Context) error {
	if err := k.openSession(ctx); err != nil {
		return err
	}
	go k.run()
	return nil
}

// Begin starts a fetch or completion: it returns the live session's
// generation and a context bounded by the session's fence deadline, or
// ErrNotLive. End must be called when the operation's statement returned.
func (k *Keeper) Begin(ctx context.Context) (context.Context, context.CancelFunc, uint64, error) {
	if !k.ops.TryRLock() {
		return nil, nil, 0, ErrNotLive // between two sessions
	}
	k.mu.Lock()
	gen, live, deadline := k.gen, k.live, k.deadline
	k.mu.Unlock()
	if !live || !time.Now().Before(deadline) {
		k.ops.RUnlock()
		return nil, nil, 0, ErrNotLive
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	return ctx, cancel, gen, nil
}

// End ends what Begin started.
func (k *Keeper) End() { k.ops.RUnlock() }

// Closed reports whether Close was called: the client stopped cleanly and
// its session row is gone, so nothing of it will be taken over, and what it
// still has to write (River's completer flushing its last outcomes while
// the client stops) may be written without a session.
func (k *Keeper) Closed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.closed
}

// FencedThrough returns the highest fenced generation: jobs fetched under it
// or an earlier one must not run, and their outcomes must not be written.
func (k *Keeper) FencedThrough() uint64 { return k.fenced.Load() }

// Close ends the session cleanly (row first, then the lock with the
// connection) and stops the Keeper.
func (k *Keeper) Close(ctx context.Context) {
	k.stopOnce.Do(func() { close(k.stop) })
	<-k.done
	k.mu.Lock()
	conn, session := k.conn, k.session
	k.conn, k.live, k.closed = nil, false, true
	k.mu.Unlock()
	if conn == nil {
		return
	}
	if _, err := conn.Exec(ctx, sqltemplate.Render(sessionCloseSQL, k.kc.Schema), session); err != nil {
		k.kc.Logger.WarnContext(ctx, "riverbpmn liveness: deleting the session row on stop failed; the leader gives back whatever it still runs",
			slog.Int64("session", session), slog.String("err", err.Error()))
	}
	_ = conn.Close(ctx)
}

// openSession connects, registers a session and makes it live.
func (k *Keeper) openSession(ctx context.Context) error {
	connectCtx, cancel := context.WithTimeout(ctx, k.cfg.FenceAfter+k.cfg.CancelGrace)
	defer cancel()
	conn, err := pgx.ConnectConfig(connectCtx, k.kc.ConnConfig)
	if err != nil {
		return fmt.Errorf("liveness: connecting for client %s: %w", k.kc.ClientID, err)
	}
	// The database must drop a session whose client it can no longer reach
	// within a bound too, so that its jobs are given back: TCP keepalives
	// and a user timeout on this connection (best effort: not every platform
	// has them).
	_, _ = conn.Exec(connectCtx, "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3")
	_, _ = conn.Exec(connectCtx, "SET tcp_user_timeout = 10000")

	sent := time.Now()
	var (
		session int64
		pid     int32
	)
	if err := conn.QueryRow(connectCtx, sqltemplate.Render(sessionOpenSQL, k.kc.Schema), k.kc.ClientID, k.lock).Scan(&session, &pid); err != nil {
		_ = conn.Close(context.Background())
		return fmt.Errorf("liveness: registering a session for client %s: %w", k.kc.ClientID, err)
	}
	k.mu.Lock()
	oldPid, oldSession := k.pid, k.session
	k.conn, k.session, k.pid = conn, session, pid
	k.gen++
	k.live = true
	k.deadline = sent.Add(k.cfg.FenceAfter)
	k.mu.Unlock()
	k.Sessions.Add(1)
	if oldSession != 0 {
		// The old session was fenced; if its backend still holds its lock
		// (the database could not tell the client was gone), end it, so that
		// its jobs are given back now rather than after TCP timeouts.
		_, _ = conn.Exec(connectCtx, sqltemplate.Render(sessionEvictSQL, k.kc.Schema), oldPid, k.lock, oldSession)
	}
	return nil
}

// run pings the session every PingInterval, fences it when a ping fails or
// the deadline passes, and opens the next one.
func (k *Keeper) run() {
	defer close(k.done)
	ticker := time.NewTicker(k.cfg.PingInterval)
	defer ticker.Stop()
	for {
		k.mu.Lock()
		live, deadline, gen := k.live, k.deadline, k.gen
		k.mu.Unlock()
		if !live {
			if !k.reopen() {
				return
			}
			continue
		}
		// The watchdog fences at the deadline even if the ping hangs.
		watchdog := time.AfterFunc(time.Until(deadline), func() { k.fence(gen, "no successful ping within FenceAfter") })
		select {
		case <-k.stop:
			watchdog.Stop()
			return
		case <-ticker.C:
		}
		lost := k.ping(gen, deadline)
		watchdog.Stop()
		if lost {
			k.fence(gen, "the session's connection is gone")
		}
	}
}

// ping runs the observe statement on the session's connection and, on
// success, moves the deadline to FenceAfter after the ping was sent. It
// reports whether the session is certainly lost (its connection is closed:
// terminated, broken, or abandoned at the deadline); any other error proves
// nothing either way, and the deadline decides.
func (k *Keeper) ping(gen uint64, deadline time.Time) bool {
	k.mu.Lock()
	conn := k.conn
	k.mu.Unlock()
	if conn == nil {
		return true
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sent := time.Now()
	var dead, resigned int64
	err := conn.QueryRow(ctx, sqltemplate.Render(sessionObserveSQL, k.kc.Schema), k.kc.Schema).Scan(&dead, &resigned)
	if err != nil {
		k.kc.Logger.WarnContext(ctx, "riverbpmn liveness: ping failed", slog.String("client_id", k.kc.ClientID), slog.String("err", err.Error()))
		return conn.IsClosed()
	}
	if resigned > 0 {
		k.kc.Logger.InfoContext(ctx, "riverbpmn liveness: resigned River leadership of a dead client", slog.String("client_id", k.kc.ClientID))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen == gen && k.live {
		k.deadline = sent.Add(k.cfg.FenceAfter)
	}
	return false
}

// fence ends generation gen's right to work: new fetches and completions are
// refused, and OnLost cancels its jobs. Idempotent.
func (k *Keeper) fence(gen uint64, why string) {
	k.mu.Lock()
	if k.gen != gen || !k.live {
		k.mu.Unlock()
		return
	}
	k.live = false
	k.mu.Unlock()
	k.fenced.Store(gen)
	k.kc.Logger.Warn("riverbpmn liveness: lost liveness; cancelling this client's running jobs",
		slog.String("client_id", k.kc.ClientID), slog.Uint64("generation", gen), slog.String("reason", why))
	if k.kc.OnLost != nil {
		k.kc.OnLost(gen)
	}
}

// reopen closes the fenced session's connection, waits for the fetches and
// completions begun under it, and opens a new session, retrying until it
// succeeds or the Keeper stops. It reports whether the Keeper goes on.
func (k *Keeper) reopen() bool {
	k.mu.Lock()
	conn := k.conn
	k.conn = nil
	k.mu.Unlock()
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(ctx)
		cancel()
	}
	// Every operation begun under the old generation has returned once the
	// write lock is ours; later ones see live == false.
	k.ops.Lock()
	defer k.ops.Unlock()
	backoff := k.cfg.PingInterval
	for {
		err := k.openSession(context.Background())
		if err == nil {
			return true
		}
		k.kc.Logger.Warn("riverbpmn liveness: opening a new session failed; retrying", slog.String("client_id", k.kc.ClientID), slog.String("err", err.Error()))
		select {
		case <-k.stop:
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
