package exclusive

import (
	"context"
	"sync"
)

// DefaultMaxBatch is the largest batch a Batcher hands to its flush function
// when not told otherwise.
const DefaultMaxBatch = 1000

// Batcher groups concurrent requests into batches, like a database's group
// commit: a request that finds no batch being flushed is flushed at once, on
// its own; requests that arrive while a flush is under way wait and go
// together in the next one. So one worker pays one statement per request and
// no added latency, while a hundred busy workers share a statement per
// round trip.
//
// The engine gives exclusive keys back through a Batcher. Do returns once its
// request is flushed, so when a job's work middleware returns, its key is
// already free, and the fetch River makes right after finds the key's next
// job.
type Batcher[T, R any] struct {
	flush    func(ctx context.Context, batch []T) ([]R, error)
	maxBatch int

	mu       sync.Mutex
	pending  []*batchRequest[T, R]
	flushing bool
}

type batchRequest[T, R any] struct {
	ctx    context.Context //nolint:containedctx // carried to the flush it joins
	item   T
	result R
	err    error
	done   chan struct{}
}

// NewBatcher returns a Batcher that calls flush with at most maxBatch items
// (DefaultMaxBatch if maxBatch <= 0). flush must return one result per item,
// in order, or an error for the whole batch. It runs on the goroutine of the
// request that started it and is never called concurrently.
func NewBatcher[T, R any](maxBatch int, flush func(ctx context.Context, batch []T) ([]R, error)) *Batcher[T, R] {
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	return &Batcher[T, R]{flush: flush, maxBatch: maxBatch}
}

// Do submits item and waits until the batch holding it is flushed, then
// returns its result. The flush of a batch runs with the context of the
// batch's first request.
func (b *Batcher[T, R]) Do(ctx context.Context, item T) (R, error) {
	req := &batchRequest[T, R]{ctx: ctx, item: item, done: make(chan struct{})}

	b.mu.Lock()
	b.pending = append(b.pending, req)
	if b.flushing {
		b.mu.Unlock()
		<-req.done
		return req.result, req.err
	}
	b.flushing = true
	b.mu.Unlock()

	// This request flushes: first its own batch, then hands over to a
	// goroutine for whatever arrived meanwhile, so that it returns as soon as
	// its own item is done.
	b.flushOnce()
	<-req.done
	return req.result, req.err
}

// flushOnce flushes one batch of pending requests; if more are pending
// afterwards, it goes on flushing them on a new goroutine.
func (b *Batcher[T, R]) flushOnce() {
	b.mu.Lock()
	n := min(len(b.pending), b.maxBatch)
	batch := b.pending[:n:n]
	b.pending = b.pending[n:]
	b.mu.Unlock()

	items := make([]T, len(batch))
	for i, req := range batch {
		items[i] = req.item
	}
	results, err := b.flush(batch[0].ctx, items)
	if err == nil && len(results) != len(items) {
		err = errBatchResults
	}
	for i, req := range batch {
		if err != nil {
			req.err = err
		} else {
			req.result = results[i]
		}
		close(req.done)
	}

	b.mu.Lock()
	if len(b.pending) == 0 {
		b.flushing = false
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	go b.flushOnce()
}

type batchError string

// Error returns the message.
func (e batchError) Error() string { return string(e) }

const errBatchResults = batchError("exclusive: batch flush returned a different number of results than items")
