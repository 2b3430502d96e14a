package exclusive

import (
	"sync"
	"time"
)

// DefaultWakeCooldown is the shortest time between two wake-ups of one
// target that a Waker sends, when the engine does not say otherwise. River's
// producers debounce their own fetches by FetchCooldown (100 ms by default),
// so waking them more often than this buys nothing.
const DefaultWakeCooldown = 10 * time.Millisecond

// Waker wakes the producers of a queue when an exclusive key is given back
// while jobs of that key wait, so that the next job of the key starts without
// waiting for a poll. It sends at the leading edge (at once when the target
// was not woken within the cooldown) and once more at the trailing edge when
// further wake-ups were asked for during the cooldown, so a wake-up is never
// lost and a busy queue costs at most one notification per cooldown.
//
// A target is any string naming what to wake (the engine uses schema and
// queue). send is called on its own goroutine, never concurrently for one
// target.
type Waker struct {
	cooldown time.Duration
	send     func(target string)

	mu      sync.Mutex
	closed  bool
	targets map[string]*wakeTarget
}

type wakeTarget struct {
	// busy is true from a send until the cooldown after it has passed.
	busy bool
	// pending asks for one more send when the cooldown passes.
	pending bool
}

// NewWaker returns a Waker that calls send for a target at most once per
// cooldown (DefaultWakeCooldown if cooldown <= 0).
func NewWaker(cooldown time.Duration, send func(target string)) *Waker {
	if cooldown <= 0 {
		cooldown = DefaultWakeCooldown
	}
	return &Waker{cooldown: cooldown, send: send, targets: make(map[string]*wakeTarget)}
}

// Wake asks for target to be woken. It never blocks on send.
func (w *Waker) Wake(target string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	t := w.targets[target]
	if t == nil {
		t = &wakeTarget{}
		w.targets[target] = t
	}
	if t.busy {
		t.pending = true
		return
	}
	t.busy = true
	go w.run(target, t)
}

// run sends for target, then keeps sending once per cooldown for as long as
// wake-ups keep arriving, and forgets the target when a cooldown passes
// without one.
func (w *Waker) run(target string, t *wakeTarget) {
	for {
		w.send(target)
		time.Sleep(w.cooldown)

		w.mu.Lock()
		if !t.pending || w.closed {
			t.busy = false
			t.pending = false
			delete(w.targets, target)
			w.mu.Unlock()
			return
		}
		t.pending = false
		w.mu.Unlock()
	}
}

// Close stops sending; wake-ups asked for later are dropped. A send already
// under way finishes.
func (w *Waker) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}
