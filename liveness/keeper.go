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

// ErrPooled is wrapped by the error of a client whose session connection
// is not one PostgreSQL backend for its whole life.
var ErrPooled = errors.New("the session's connection goes through a transaction-mode connection pooler (such as PgBouncer with pool_mode=transaction or statement): " +
	"its advisory lock would stay with a pooled server connection after the client dies, and the client's jobs would never be given back; " +
	"set Config.Liveness.ConnConfig to a direct connection to PostgreSQL (or to a session-mode pool), or Config.Liveness.Disabled")

// checkDedicated proves that conn is one PostgreSQL backend of its own, as
// the session's lock needs: a second connection opened with the same
// settings (cc) is another backend, even when its first statement comes
// right after one of conn's (a transaction pooler hands it the server
// connection conn just released), and while that second connection holds
// a transaction open, conn's statements still run on backend pid, which
// holds the session's lock.
func checkDedicated(ctx context.Context, conn *pgx.Conn, cc *pgx.ConnConfig, pid, lock int32, session int64) error {
	probe, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return fmt.Errorf("connecting to check the session's connection: %w", err)
	}
	defer func() { _ = probe.Close(context.Background()) }()
	var other int32
	if err := probe.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&other); err != nil {
		return fmt.Errorf("checking the session's connection: %w", err)
	}
	if other == pid {
		return fmt.Errorf("%w (two connections ran on backend %d)", ErrPooled, pid)
	}
	tx, err := probe.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%w (a transaction could not be opened: %w)", ErrPooled, err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&other); err != nil {
		return fmt.Errorf("%w (a transaction could not be used: %w)", ErrPooled, err)
	}
	if other == pid {
		return fmt.Errorf("%w (two connections ran on backend %d)", ErrPooled, pid)
	}
	var (
		mine  int32
		holds bool
	)
	if err := conn.QueryRow(ctx, sessionHeldSQL, lock, session).Scan(&mine, &holds); err != nil {
		return fmt.Errorf("checking the session's connection: %w", err)
	}
	if mine != pid || !holds {
		return fmt.Errorf("%w (the session's lock was taken on backend %d, its next statement ran on backend %d)", ErrPooled, pid, mine)
	}
	return nil
}

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
	deadline time.Time // gen's fence deadline (monotonic): last proof + FenceAfter
	proved   time.Time // when the last ping that succeeded was sent
	grace    time.Time // after a stall, until when gen may still prove it is alive
	fenced   atomic.Uint64
	conn     *pgx.Conn
	session  int64
	pid      int32
	// pingCancel cancels the ping under way, if any (a fence or Close does).
	pingCancel context.CancelFunc

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	Sessions atomic.Int64 // sessions opened, for tests and logs
}

// LockClass is the first key of the session locks of schema's clients
// (pg_locks.classid of their advisory locks; the second key, objid, is the
// session's id).
func LockClass(schema string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte("riverbpmn liveness\x00" + schema))
	return int32(h.Sum32() & 0x7fffffff) //nolint:gosec // masked to 31 bits
}

// NewKeeper returns a Keeper; Open starts it.
func NewKeeper(cfg Config, kc KeeperConfig) *Keeper {
	if kc.Logger == nil {
		kc.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{
		cfg:  cfg.WithDefaults(),
		kc:   kc,
		lock: LockClass(kc.Schema),
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

// BeginWait is Begin, except that while the client is proving its session
// alive after a stall (its deadline passed while its process did not run)
// it waits, at most FenceAfter, for the proof rather than failing at once:
// River's completer writes the outcomes of the jobs a stalled client
// finished once it is known that nobody took them over.
func (k *Keeper) BeginWait(ctx context.Context) (context.Context, context.CancelFunc, uint64, error) {
	limit := time.Now().Add(k.cfg.FenceAfter)
	for {
		opCtx, cancel, gen, err := k.Begin(ctx)
		if err == nil || !k.proving() || time.Now().After(limit) {
			return opCtx, cancel, gen, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// proving reports whether the live session's deadline passed while the
// client was given a grace to prove it alive after a stall.
func (k *Keeper) proving() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live && time.Now().Before(k.grace)
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
	select {
	case <-k.done:
	case <-ctx.Done():
		// A ping that hangs (the database unreachable) is abandoned.
		k.mu.Lock()
		if k.pingCancel != nil {
			k.pingCancel()
		}
		k.mu.Unlock()
		<-k.done
	}
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
	// and a user timeout on this connection, that give up about StallAfter
	// after the client went silent, as the stall check does (best effort:
	// not every platform has them).
	stall := int(max(k.cfg.StallAfter/time.Second, 2))
	_, _ = conn.Exec(connectCtx, fmt.Sprintf("SET tcp_keepalives_idle = %d; SET tcp_keepalives_interval = %d; SET tcp_keepalives_count = 5",
		max(stall/2, 1), max(stall/10, 1)))
	_, _ = conn.Exec(connectCtx, fmt.Sprintf("SET tcp_user_timeout = %d", stall*1000))

	sent := time.Now()
	var (
		session int64
		pid     int32
	)
	if err := conn.QueryRow(connectCtx, sqltemplate.Render(sessionOpenSQL, k.kc.Schema), k.kc.ClientID, k.lock).Scan(&session, &pid); err != nil {
		_ = conn.Close(context.Background())
		return fmt.Errorf("liveness: registering a session for client %s: %w", k.kc.ClientID, err)
	}
	if err := checkDedicated(connectCtx, conn, k.kc.ConnConfig, pid, k.lock, session); err != nil {
		// The lock is held by a pooled server connection that outlives this
		// client, and an unlock could run on another one: end the backend
		// holding it (the pooler replaces it), then delete the row.
		cleanup, cancel := context.WithTimeout(context.Background(), k.cfg.FenceAfter)
		defer cancel()
		_, _ = conn.Exec(cleanup, sqltemplate.Render(sessionEvictSQL, k.kc.Schema), pid, k.lock, session)
		_, _ = conn.Exec(cleanup, sqltemplate.Render(sessionCloseSQL, k.kc.Schema), session)
		_ = conn.Close(context.Background())
		return fmt.Errorf("liveness: client %s: %w", k.kc.ClientID, err)
	}
	k.mu.Lock()
	oldPid, oldSession := k.pid, k.session
	k.conn, k.session, k.pid = conn, session, pid
	k.gen++
	k.live = true
	k.deadline = sent.Add(k.cfg.FenceAfter)
	k.proved = sent
	k.grace = time.Time{}
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

// run pings the session every PingInterval, fences it when a ping finds
// its connection gone or its session dead, and opens the next one. The
// watchdog (watch) fences it when the deadline passes without a proof.
func (k *Keeper) run() {
	defer close(k.done)
	watchStop := make(chan struct{})
	watchDone := make(chan struct{})
	go k.watch(watchStop, watchDone)
	defer func() { close(watchStop); <-watchDone }()
	ticker := time.NewTicker(k.cfg.PingInterval)
	defer ticker.Stop()
	for {
		k.mu.Lock()
		live, gen := k.live, k.gen
		k.mu.Unlock()
		if !live {
			if !k.reopen() {
				return
			}
			continue
		}
		select {
		case <-k.stop:
			return
		case <-ticker.C:
		}
		if why := k.ping(gen); why != "" {
			select {
			case <-k.stop:
				return // Close decides what becomes of the session
			default:
			}
			k.fence(gen, why)
		}
	}
}

// watch is the watchdog: it fences the live session when its deadline
// (FenceAfter after the last ping that succeeded was sent) passes, even if
// the ping under way hangs. A deadline that passed while the process did not
// run (the watchdog woke more than PingInterval late: the process was
// frozen or starved) is no sign that the session is lost, only that it was
// not checked: the client gets FenceAfter from when it runs again (never
// beyond StallAfter after its last proof, from which the others may declare
// it stalled) to prove its session alive, fetching and writing nothing
// meanwhile.
func (k *Keeper) watch(stop, done chan struct{}) {
	defer close(done)
	for {
		k.mu.Lock()
		live, gen, at := k.live, k.gen, k.deadline
		if k.grace.After(at) {
			at = k.grace
		}
		k.mu.Unlock()
		if !live {
			at = time.Now().Add(k.cfg.PingInterval) // look again soon
		}
		armed := time.Now()
		timer := time.NewTimer(at.Sub(armed))
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		if !live {
			continue
		}
		now := time.Now()
		k.mu.Lock()
		due := k.deadline
		if k.grace.After(due) {
			due = k.grace
		}
		if k.gen != gen || !k.live || due.After(now) {
			k.mu.Unlock()
			continue // proved meanwhile, or another session
		}
		late := now.Sub(laterOf(at, armed))
		hard := k.proved.Add(k.cfg.StallAfter)
		if late > k.cfg.PingInterval && now.Before(hard) {
			k.grace = now.Add(k.cfg.FenceAfter)
			if k.grace.After(hard) {
				k.grace = hard
			}
			k.mu.Unlock()
			k.kc.Logger.Warn("riverbpmn liveness: this client did not run for a while (a pause, CPU starvation, a frozen process); proving its session alive before going on",
				slog.String("client_id", k.kc.ClientID), slog.Duration("late", late.Round(time.Millisecond)),
				slog.Duration("since_last_proof", now.Sub(k.proved).Round(time.Millisecond)))
			continue
		}
		k.mu.Unlock()
		k.fence(gen, "no successful ping within FenceAfter")
	}
}

// ping runs the observe statement on the session's connection and, on
// success, moves the deadline to FenceAfter after the ping was sent. It
// returns why the session is lost: its connection is closed (terminated,
// broken, or abandoned by a fence), the others declared it dead (stalled),
// or the statement ran on another backend than the session's (a
// transaction-mode pooler). Any other error proves nothing either way, and
// the deadline decides. A ping waits for its reply as long as it takes: the
// watchdog fences a session whose ping hangs, and the fence cancels it.
func (k *Keeper) ping(gen uint64) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k.mu.Lock()
	conn, session, pid := k.conn, k.session, k.pid
	if k.gen != gen || !k.live || conn == nil {
		k.mu.Unlock()
		return ""
	}
	k.pingCancel = cancel
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.pingCancel = nil
		k.mu.Unlock()
	}()
	sent := time.Now()
	var obs observation
	if err := observe(ctx, conn, k.kc.Schema, session, k.cfg.StallAfter, &obs); err != nil {
		if conn.IsClosed() {
			return "the session's connection is gone"
		}
		k.kc.Logger.WarnContext(ctx, "riverbpmn liveness: ping failed", slog.String("client_id", k.kc.ClientID), slog.String("err", err.Error()))
		return ""
	}
	if obs.backend != pid {
		k.kc.Logger.Error("riverbpmn liveness: "+ErrPooled.Error(), slog.String("client_id", k.kc.ClientID),
			slog.Int("session_backend", int(pid)), slog.Int("ping_backend", int(obs.backend)))
		return "the session's statements run on another backend than the one holding its lock (a transaction-mode pooler)"
	}
	if !obs.selfAlive {
		return "the other clients declared this client's session dead (no ping within StallAfter, or its lock lost)"
	}
	if obs.resigned > 0 {
		k.kc.Logger.InfoContext(ctx, "riverbpmn liveness: resigned River leadership of a dead client", slog.String("client_id", k.kc.ClientID))
	}
	if obs.ended > 0 {
		k.kc.Logger.WarnContext(ctx, "riverbpmn liveness: ended the connections of stalled clients (no ping within StallAfter); their jobs are given back after TakeoverAfter",
			slog.String("client_id", k.kc.ClientID), slog.Int64("sessions", obs.ended))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen == gen && k.live && sent.Add(k.cfg.FenceAfter).After(k.deadline) {
		k.deadline = sent.Add(k.cfg.FenceAfter)
		k.proved = sent
		if !k.grace.IsZero() && !sent.Before(k.grace.Add(-k.cfg.FenceAfter)) {
			k.grace = time.Time{} // proved after the stall
		}
	}
	return ""
}

// Fence ends session generation gen's right to work, as when it cannot
// prove it alive: for a fetch that outlived the session's deadline, which
// may have locked jobs the client never learnt of (its session is then
// replaced, and the leader gives back whatever the old one still runs).
func (k *Keeper) Fence(gen uint64, why string) { k.fence(gen, why) }

// fence ends generation gen's right to work: new fetches and completions are
// refused, and OnLost cancels its jobs. Idempotent.
func (k *Keeper) fence(gen uint64, why string) {
	k.mu.Lock()
	if k.gen != gen || !k.live {
		k.mu.Unlock()
		return
	}
	k.live = false
	if k.pingCancel != nil {
		k.pingCancel()
	}
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

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
