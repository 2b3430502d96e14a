package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ListenDB is a DB that can also lend a connection of its own, on which a
// subscriber LISTENs; *pgxpool.Pool has it.
type ListenDB interface {
	TxDB
	Acquire(ctx context.Context) (*pgxpool.Conn, error)
}

// Defaults of SubscribeConfig.
const (
	DefaultBatchSize    = 1000
	DefaultPollInterval = time.Second
)

// followUpInterval is how soon a subscriber reads again after a batch: a
// little more than the trigger's notification slot (50 ms, migration
// riverbpmn/013), within which only the first statement notifies.
const followUpInterval = 60 * time.Millisecond

// SubscribeConfig configures Subscribe.
type SubscribeConfig struct {
	// Schema holds River's and riverbpmn's tables; empty means the
	// connection's search_path.
	Schema string

	// Name makes the subscription durable: its cursor is stored in the
	// database after every batch the handler accepted, and a later Subscribe
	// with the same name resumes from it (From is then used only to create
	// the subscription). Empty: the cursor lives only in this call.
	Name string

	// From is where a new subscription starts: nil means now (events of
	// transactions that had not ended when Subscribe started, and later);
	// &Cursor{} means the beginning of what the outbox retains.
	From *Cursor

	// ProcessInstanceID, when set, passes on only the events of jobs of
	// that process instance (the cursor still moves over the others).
	ProcessInstanceID string

	// BatchSize is the most events one handler call gets
	// (DefaultBatchSize if 0).
	BatchSize int

	// PollInterval is how often the outbox is read when no notification
	// arrives (DefaultPollInterval if 0).
	PollInterval time.Duration

	// SkipPruned decides what happens when events after the cursor were
	// pruned before they were read (the subscriber was away, or behind, for
	// longer than the outbox retains events; see ErrPruned): false, the
	// default, ends Subscribe with the *GapError, so the loss cannot pass
	// unnoticed; true logs the gap as a warning and reads on after it.
	SkipPruned bool

	// Logger receives database errors the subscriber retries through, and
	// skipped gaps; nil discards them.
	Logger *slog.Logger
}

// Subscribe calls handle with every event after the subscription's cursor,
// in cursor order, in batches, until ctx is done or handle returns an error
// (which Subscribe returns). The cursor moves past a batch only once handle
// returned nil for it. Database errors, including a restart of PostgreSQL,
// are retried with backoff: events are read again from the cursor, so none
// is lost. Events that are lost all the same, pruned by the retention before
// they were read, end it with a *GapError (errors.Is ErrPruned) unless
// SkipPruned. It returns ctx's error when ctx is done.
func Subscribe(ctx context.Context, db ListenDB, cfg *SubscribeConfig, handle func(context.Context, []Event) error) error {
	if cfg == nil {
		cfg = &SubscribeConfig{}
	}
	c := *cfg
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	switch {
	case c.BatchSize < 0:
		return fmt.Errorf("events: SubscribeConfig.BatchSize must not be negative, got %d", c.BatchSize)
	case c.PollInterval < 0:
		return fmt.Errorf("events: SubscribeConfig.PollInterval must not be negative, got %s", c.PollInterval)
	case len(c.Name) > 255:
		return fmt.Errorf("events: SubscribeConfig.Name is %d bytes long, more than 255", len(c.Name))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	s := &subscriber{db: db, cfg: &c, wake: make(chan struct{}, 1)}
	return s.run(ctx, handle)
}

type subscriber struct {
	db     ListenDB
	cfg    *SubscribeConfig
	cursor Cursor
	wake   chan struct{}
}

// backoff returns the wait after the n-th consecutive failure (n >= 1).
func backoff(n int) time.Duration {
	d := 50 * time.Millisecond << min(n-1, 6)
	return min(d, 2*time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *subscriber) run(ctx context.Context, handle func(context.Context, []Event) error) error {
	// Start: find (or create) the cursor, retrying through database errors.
	for failures := 0; ; {
		err := s.start(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		failures++
		s.cfg.Logger.WarnContext(ctx, "events: starting subscription failed; retrying", slog.String("error", err.Error()))
		if err := sleep(ctx, backoff(failures)); err != nil {
			return err
		}
	}

	listenCtx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	go s.listen(listenCtx)

	failures := 0
	for {
		more, got, pending, err := s.step(ctx, handle)
		var (
			handlerErr *handlerError
			gap        *GapError
		)
		switch {
		case errors.As(err, &handlerErr):
			return handlerErr.err
		case errors.As(err, &gap):
			if !s.cfg.SkipPruned {
				return gap
			}
			s.cfg.Logger.WarnContext(ctx, "events: events were pruned before they were read; skipping the gap",
				slog.String("after", gap.After.String()), slog.String("pruned_through", gap.Through.String()))
			s.moveTo(ctx, gap.Through)
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			failures++
			s.cfg.Logger.WarnContext(ctx, "events: reading events failed; retrying", slog.String("error", err.Error()))
			if err := sleep(ctx, backoff(failures)); err != nil {
				return err
			}
			continue
		}
		failures = 0
		switch {
		case more:
			continue
		case pending:
			// An event exists that an older transaction still hides: look
			// again soon.
			if err := sleep(ctx, 20*time.Millisecond); err != nil {
				return err
			}
		default:
			// After a batch, look again after the trigger's notification
			// slot: a statement that committed just after the one that
			// notified in that slot sent no notification of its own
			// (migration riverbpmn/013), and its events must not wait for
			// the poll interval.
			wait := s.cfg.PollInterval
			if got {
				wait = min(wait, followUpInterval)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-s.wake:
			case <-t.C:
			}
			t.Stop()
		}
	}
}

type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// start sets the cursor: the named subscription's, else From, else now.
func (s *subscriber) start(ctx context.Context) error {
	from := s.cfg.From
	if from == nil {
		now, err := Now(ctx, s.db)
		if err != nil {
			return err
		}
		from = &now
	}
	if s.cfg.Name == "" {
		s.cursor = *from
		return nil
	}
	if _, err := s.db.Exec(ctx, sqltemplate.Render(subscriptionCreateSQL, s.cfg.Schema), append([]any{s.cfg.Name}, from.args()...)...); err != nil {
		return fmt.Errorf("events: creating subscription %q: %w%s", s.cfg.Name, err, migrationHint(err))
	}
	var txid string
	if err := s.db.QueryRow(ctx, sqltemplate.Render(subscriptionGetSQL, s.cfg.Schema), s.cfg.Name).Scan(&txid, &s.cursor.ID); err != nil {
		return fmt.Errorf("events: reading subscription %q: %w", s.cfg.Name, err)
	}
	tx, err := strconv.ParseUint(txid, 10, 64)
	if err != nil {
		return fmt.Errorf("events: subscription %q: transaction id %q: %w", s.cfg.Name, txid, err)
	}
	s.cursor.TxID = tx
	return nil
}

// step reads one batch after the cursor, hands it over, and moves the
// cursor. more says a full batch came back, got that a batch (full or not)
// came back; pending that an event exists that could not be read yet.
func (s *subscriber) step(ctx context.Context, handle func(context.Context, []Event) error) (more, got, pending bool, err error) {
	batch, pending, err := ReadChecked(ctx, s.db, s.cfg.Schema, s.cursor, s.cfg.BatchSize)
	if err != nil || len(batch) == 0 {
		return false, false, pending, err
	}
	deliver := batch
	if pi := s.cfg.ProcessInstanceID; pi != "" {
		deliver = make([]Event, 0, len(batch))
		for _, ev := range batch {
			if ev.ProcessInstanceID == pi {
				deliver = append(deliver, ev)
			}
		}
	}
	if len(deliver) > 0 {
		if err := handle(ctx, deliver); err != nil {
			return false, false, false, &handlerError{err: err}
		}
	}
	s.moveTo(ctx, batch[len(batch)-1].Cursor)
	return len(batch) == s.cfg.BatchSize, true, false, nil
}

// moveTo moves the cursor to next, and the named subscription's saved
// cursor with it. The save outlives ctx's end (for a few seconds): a handler
// that ends the subscription from within, by cancelling ctx, has handled its
// batch, and a resumed subscription should not get it again.
func (s *subscriber) moveTo(ctx context.Context, next Cursor) {
	if s.cfg.Name != "" {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := s.db.Exec(saveCtx, sqltemplate.Render(subscriptionSaveSQL, s.cfg.Schema), append([]any{s.cfg.Name}, next.args()...)...); err != nil {
			// The batch was handled; it is delivered again after a restart
			// (at least once), and the next save covers it.
			s.cfg.Logger.WarnContext(ctx, "events: saving subscription cursor failed", slog.String("error", err.Error()))
		}
	}
	s.cursor = next
}

// listen wakes the read loop on every notification of the schema's event
// channel, reconnecting after errors, until ctx is done.
func (s *subscriber) listen(ctx context.Context) {
	for failures := 0; ctx.Err() == nil; {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		failures++
		s.cfg.Logger.WarnContext(ctx, "events: listening for notifications failed; reconnecting", slog.String("error", err.Error()))
		s.signal() // read anything that arrived while not listening
		if sleep(ctx, backoff(failures)) != nil {
			return
		}
	}
}

func (s *subscriber) listenOnce(ctx context.Context) error {
	pooled, err := s.db.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pooled.Hijack() // a LISTENing connection must not go back to the pool
	defer conn.Close(context.WithoutCancel(ctx))

	schema := s.cfg.Schema
	if schema == "" {
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{schema + ".river_bpmn_event"}.Sanitize()); err != nil {
		return err
	}
	s.signal() // events may have arrived before LISTEN took effect
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		s.signal()
	}
}

func (s *subscriber) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
