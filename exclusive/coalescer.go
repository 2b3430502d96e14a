package exclusive

import (
	"sync"
	"time"
)

// DefaultReleaseDelay is how long, at most, a key given back waits to be
// written together with others, when the engine does not say otherwise.
const DefaultReleaseDelay = time.Millisecond

// Coalescer collects items (the engine: keys to give back) and hands them
// out in batches to flush, called on its own goroutine once the oldest
// pending item has waited delay; a caller of Take may claim them earlier.
// Every item is handed out exactly once. So a hundred busy workers share one
// statement per delay, and none of them waits for it.
type Coalescer[T any] struct {
	delay time.Duration
	flush func(batch []T)

	mu      sync.Mutex
	pending []T
	armed   bool
}

// NewCoalescer returns a Coalescer that flushes pending items after delay
// (DefaultReleaseDelay if delay <= 0).
func NewCoalescer[T any](delay time.Duration, flush func(batch []T)) *Coalescer[T] {
	if delay <= 0 {
		delay = DefaultReleaseDelay
	}
	return &Coalescer[T]{delay: delay, flush: flush}
}

// Add queues item. It never blocks on a flush.
func (c *Coalescer[T]) Add(item T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, item)
	if !c.armed {
		c.armed = true
		time.AfterFunc(c.delay, c.flushPending)
	}
}

// Take hands out every pending item (nil if none); the caller owns them.
func (c *Coalescer[T]) Take() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	batch := c.pending
	c.pending = nil
	return batch
}

// Requeue puts items back, for a caller of Take that could not write them.
func (c *Coalescer[T]) Requeue(items []T) {
	for _, item := range items {
		c.Add(item)
	}
}

func (c *Coalescer[T]) flushPending() {
	c.mu.Lock()
	batch := c.pending
	c.pending = nil
	c.armed = false
	c.mu.Unlock()
	if len(batch) > 0 {
		c.flush(batch)
	}
}
