package jobcontrol

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

// ProgressMetadataKey is the river_job.metadata key under which a job's
// progress is stored.
const ProgressMetadataKey = "bpmn_progress"

// DefaultProgressInterval is the shortest time between two progress writes
// of one job (REGARDS' default).
const DefaultProgressInterval = time.Second

// progressWriteTimeout bounds one progress write.
const progressWriteTimeout = 5 * time.Second

var progressWriteSQL = sqltemplate.MustRead(sqlFS, "sql/progress_write.sql")

// Progress is a job's progress as stored in its metadata.
type Progress struct {
	// Done is how far the job got, out of Total.
	Done int64 `json:"done"`
	// Total is the completion count the job declared; 0 if it declared none.
	Total int64 `json:"total"`
	// Percent is Done/Total in percent (two decimals), absent without a
	// total.
	Percent *float64 `json:"percent,omitempty"`
	// UpdatedAt is when the value was written.
	UpdatedAt time.Time `json:"updated_at"`
}

// Reporter reports one running job's progress. Its methods are safe for
// concurrent use and cost an atomic operation: nothing is written to the
// database on a call.
type Reporter struct {
	db       DB
	schema   string
	jobID    int64
	attempt  int
	interval time.Duration

	total, done atomic.Int64
	used        atomic.Bool

	mu      sync.Mutex // guards the fields below
	started bool
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
	last    [2]int64 // done, total last written
	written bool     // whether anything was written
	writes  int      // writes made
	lastErr error
}

// NewReporter returns the reporter of attempt of job jobID, writing through
// db to schema's river_job at most once per interval
// (DefaultProgressInterval if interval <= 0). Call Close when the work
// returns. The engine's middleware does both; workers get the reporter with
// handlers.Progress.
func NewReporter(db DB, schema string, jobID int64, attempt int, interval time.Duration) *Reporter {
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	return &Reporter{db: db, schema: schema, jobID: jobID, attempt: attempt, interval: interval}
}

// SetTotal declares the job's completion count (REGARDS' getCompletionCount).
func (r *Reporter) SetTotal(total int64) {
	r.total.Store(max(total, 0))
	r.touch()
}

// Advance adds n to how far the job got.
func (r *Reporter) Advance(n int64) {
	r.done.Add(n)
	r.touch()
}

// Set sets how far the job got.
func (r *Reporter) Set(done int64) {
	r.done.Store(done)
	r.touch()
}

// Value returns the progress as it stands in memory.
func (r *Reporter) Value() (done, total int64) { return r.done.Load(), r.total.Load() }

// Writes returns how many times the progress was written to the database.
func (r *Reporter) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

// touch starts the writer goroutine on first use.
func (r *Reporter) touch() {
	if r.used.Load() {
		return
	}
	r.used.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.closed {
		return
	}
	r.started = true
	r.stop = make(chan struct{})
	r.stopped = make(chan struct{})
	go r.run()
}

func (r *Reporter) run() {
	defer close(r.stopped)
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-ticker.C:
			ctx, cancel := context.WithTimeout(context.Background(), progressWriteTimeout)
			r.write(ctx)
			cancel()
		}
	}
}

// write stores the current value if it changed since the last write.
func (r *Reporter) write(ctx context.Context) {
	done, total := r.done.Load(), r.total.Load()
	r.mu.Lock()
	unchanged := r.written && r.last == [2]int64{done, total}
	r.mu.Unlock()
	if unchanged {
		return
	}
	p := Progress{Done: done, Total: total, UpdatedAt: time.Now().UTC()}
	if total > 0 {
		pct := math.Round(float64(done)/float64(total)*10000) / 100
		p.Percent = &pct
	}
	value, err := json.Marshal(p)
	if err == nil {
		_, err = r.db.Exec(ctx, sqltemplate.Render(progressWriteSQL, r.schema), r.jobID, r.attempt, value)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.lastErr = fmt.Errorf("jobcontrol: writing progress of job %d: %w", r.jobID, err)
		return
	}
	r.last, r.written = [2]int64{done, total}, true
	r.writes++
}

// Close stops the periodic writes and, if the job reported anything not yet
// written, writes the final value. It returns the last write error, if any
// (progress is informative: the job's outcome does not depend on it).
func (r *Reporter) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	started := r.started
	r.mu.Unlock()
	if !started {
		return nil
	}
	close(r.stop)
	<-r.stopped
	r.write(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

type reporterKey struct{}

// WithReporter returns ctx carrying r, for ReporterFrom.
func WithReporter(ctx context.Context, r *Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// ReporterFrom returns the reporter in ctx, or nil.
func ReporterFrom(ctx context.Context) *Reporter {
	r, _ := ctx.Value(reporterKey{}).(*Reporter)
	return r
}

// WorkWithProgress runs doInner with a reporter for the job in its context
// and writes the final progress when it returns. The reporter costs nothing
// until the work uses it.
func WorkWithProgress(ctx context.Context, db DB, schema string, jobID int64, attempt int, interval time.Duration, doInner func(context.Context) error) error {
	r := NewReporter(db, schema, jobID, attempt, interval)
	err := doInner(WithReporter(ctx, r))
	if r.used.Load() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), progressWriteTimeout)
		defer cancel()
		_ = r.Close(closeCtx) // informative only; the outcome is the work's
	}
	return err
}
