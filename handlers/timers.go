package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/deployment"
	"github.com/riverbpmn/riverbpmn/timer"
	"github.com/riverbpmn/riverbpmn/workflow"
)

// Timer is a BPMN timer definition: set exactly one field.
type Timer struct {
	// Date is an ISO-8601 date-time (BPMN timeDate), such as
	// "2026-03-01T09:00:00Z" or "2026-03-01T10:00:00+01:00" (no offset:
	// UTC). The timer fires once, at that time (at once if it is past).
	Date string
	// Duration is an ISO-8601 duration (BPMN timeDuration), such as "PT5M":
	// the timer fires once, that long after it is inserted.
	Duration string
	// Cycle is a BPMN timeCycle: an ISO-8601 repeating interval ("R3/PT10H"
	// anchored at insertion, "R/PT1H" unbounded, "R3/<start>/PT1H",
	// "Rn/PT1H/<end>", "R/<start>/P1D/<end>") or a cron expression in
	// Spring's dialect ("0 0 9 ? * MON-FRI", see timer.Cron).
	Cycle string
}

// TimerOf returns the timer of a deployed timer job definition (its
// timeDate, timeDuration or timeCycle as written in the model), to insert
// with InsertTx under that job definition. A deployment records timers; it
// does not schedule them. A job definition that is not a timer's is an
// error naming it.
func TimerOf(jd deployment.JobDefinition) (Timer, error) {
	switch timer.Type(jd.TimerType) {
	case timer.TypeDate:
		return Timer{Date: jd.TimerValue}, nil
	case timer.TypeDuration:
		return Timer{Duration: jd.TimerValue}, nil
	case timer.TypeCycle:
		return Timer{Cycle: jd.TimerValue}, nil
	}
	return Timer{}, fmt.Errorf("handlers: job definition %q (type %s) is not a timer's", jd.ID, jd.Type)
}

// definition parses the one field that is set.
func (t Timer) definition() (timer.Definition, error) {
	var set []timer.Type
	var typ timer.Type
	var value string
	for _, f := range []struct {
		typ   timer.Type
		value string
	}{{timer.TypeDate, t.Date}, {timer.TypeDuration, t.Duration}, {timer.TypeCycle, t.Cycle}} {
		if f.value != "" {
			set = append(set, f.typ)
			typ, value = f.typ, f.value
		}
	}
	if len(set) != 1 {
		return timer.Definition{}, fmt.Errorf("handlers: a Timer needs exactly one of Date, Duration and Cycle, got %d (%+v): %w", len(set), t, timer.ErrInvalid)
	}
	return timer.Parse(typ, value)
}

// Validate reports a timer definition that cannot be used, naming the value
// (a cycle or cron expression that does not parse, a date in a form Camunda
// rejects, a cycle with zero repetitions). InsertTx validates for you; call
// it to fail at configuration time.
func (t Timer) Validate() error {
	_, err := t.definition()
	return err
}

// TimersConfig configures Timers.
type TimersConfig struct {
	// Schema is the schema of River's and riverbpmn's tables, as in
	// river.Config.Schema. Empty means the connection's search_path.
	Schema string
	// Now is the clock used to anchor timers and compute next occurrences;
	// nil means time.Now. Tests set it.
	Now func() time.Time
}

// Timers inserts timer jobs and runs their lifecycle. Create one per
// process with NewTimers, give its Middleware to every River client that
// works timer jobs, and insert timers with InsertTx.
type Timers struct {
	dbPool *pgxpool.Pool
	store  *timer.Store
}

// NewTimers returns Timers working on dbPool (the pool River's clients use).
func NewTimers(dbPool *pgxpool.Pool, config *TimersConfig) *Timers {
	if config == nil {
		config = &TimersConfig{}
	}
	return &Timers{dbPool: dbPool, store: &timer.Store{Schema: config.Schema, Now: config.Now}}
}

// TimerInsertResult is what InsertTx returns.
type TimerInsertResult struct {
	// TimerID identifies the timer (and its whole cycle) in the management
	// API: workflow.Engine.Timers (timer.Timers.Get, SetDueDate, Cancel).
	TimerID int64
	// DueAt is the first occurrence's due date.
	DueAt time.Time
	// Job is the first occurrence's job, in the state it is stored in
	// (available when near due, see InsertTx).
	Job *rivertype.JobInsertResult
}

// ErrNotTimerJob is returned by InsertTx when the args' own job context
// declares a job type other than workflow.JobTypeTimer (an empty job type
// is fine: InsertTx sets it).
var ErrNotTimerJob = errors.New("handlers: the args' JobContext must have JobType workflow.JobTypeTimer or none")

// InsertTx inserts a timer in tx: a row in river_bpmn_timer and its first
// occurrence, a River job of args' kind scheduled at the first due date.
// The job gets JobType workflow.JobTypeTimer in its job context, whether the
// context comes from args (workflow.JobArgsWithJobContext, whose JobType
// may be left empty) or from opts.Metadata, and records its timer under
// metadata key timer.MetadataKey. Every other insert option applies as
// usual; ScheduledAt is replaced by the due date. A timer needs a job
// context with at least a process definition key (a timer start event has
// no process instance). Nothing is written if the definition is invalid or
// never fires: the error names the value.
//
// The job context as given (before the engine resolves it) and the
// MaxAttempts asked for are kept as the timer's template: every later
// occurrence is inserted from it through River's client, so it gets the
// settings in force at its creation (the job definition's priority,
// overriding priority, retry cycle and suspension), as in Camunda. An
// occurrence due within timer.NearDue of its insert is inserted
// 'available' (with its future scheduled_at, which River's fetch respects)
// so that it is fetched by the first fetch after its due date rather than
// at River's job scheduler's next pass.
//
// Occurrences are worked by the args' worker; the Middleware must be
// installed on the clients that work them so that cycles continue.
func (t *Timers) InsertTx(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, args river.JobArgs, tm Timer, opts *river.InsertOpts) (*TimerInsertResult, error) {
	def, err := tm.definition()
	if err != nil {
		return nil, err
	}
	var o river.InsertOpts
	if opts != nil {
		o = *opts
	}
	metadata := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(o.Metadata)) > 0 {
		if err := json.Unmarshal(o.Metadata, &metadata); err != nil || metadata == nil {
			return nil, fmt.Errorf("handlers: InsertOpts.Metadata must be a JSON object, got %q", o.Metadata)
		}
		metadata = maps.Clone(metadata)
	}
	var given workflow.JobContext
	if withContext, ok := args.(workflow.JobArgsWithJobContext); ok {
		given = withContext.JobContext()
		switch given.JobType {
		case workflow.JobTypeTimer:
		case "":
			given.JobType = workflow.JobTypeTimer
			args = timerJobArgs{inner: args, jc: given}
		default:
			return nil, fmt.Errorf("%w; %s args give %q", ErrNotTimerJob, args.Kind(), given.JobType)
		}
	} else {
		if raw, ok := metadata[workflow.MetadataKey]; ok {
			if err := json.Unmarshal(raw, &given); err != nil {
				return nil, fmt.Errorf("handlers: InsertOpts.Metadata[%q]: %w", workflow.MetadataKey, err)
			}
		}
		if given.JobType != "" && given.JobType != workflow.JobTypeTimer {
			return nil, fmt.Errorf("%w; InsertOpts.Metadata[%q] gives %q", ErrNotTimerJob, workflow.MetadataKey, given.JobType)
		}
		given.JobType = workflow.JobTypeTimer
		if err := given.Validate(); err != nil {
			return nil, fmt.Errorf("handlers: the job context of a timer (InsertOpts.Metadata[%q]) needs at least a process_definition_key: %w", workflow.MetadataKey, err)
		}
		encoded, err := given.AddToMetadata(nil)
		if err != nil {
			return nil, err
		}
		var withContext map[string]json.RawMessage
		if err := json.Unmarshal(encoded, &withContext); err != nil {
			return nil, err
		}
		metadata[workflow.MetadataKey] = withContext[workflow.MetadataKey]
	}
	template, err := newTemplate(given, args, &o)
	if err != nil {
		return nil, err
	}

	created, err := t.store.Create(ctx, tx, timer.NewTimer{Definition: def, Kind: args.Kind(), Queue: queueOf(args, &o)})
	if err != nil {
		return nil, err
	}
	encoded, err := json.Marshal(timer.JobMetadata{TimerID: created.TimerID, Occurrence: 1, Definition: def.String(), Template: template})
	if err != nil {
		return nil, err
	}
	metadata[timer.MetadataKey] = encoded
	if o.Metadata, err = json.Marshal(metadata); err != nil {
		return nil, err
	}
	o.ScheduledAt = created.First.At

	res, err := client.InsertTx(ctx, tx, args, &o)
	if err != nil {
		return nil, err
	}
	if res.UniqueSkippedAsDuplicate {
		return nil, fmt.Errorf("handlers: the first occurrence of timer %q was skipped as a duplicate of job %d by its UniqueOpts; roll the transaction back", def.String(), res.Job.ID)
	}
	if res.Job.State == rivertype.JobStateScheduled {
		available, err := t.store.MakeAvailableIfNearDue(ctx, tx, res.Job.ID, created.First.At)
		if err != nil {
			return nil, fmt.Errorf("handlers: first occurrence of timer %q (job %d): %w", def.String(), res.Job.ID, err)
		}
		if available { // the result says the state stored, as River's insert does
			res.Job.State = rivertype.JobStateAvailable
		}
	}
	ident := timer.Identity{JobID: res.Job.ID, Queue: res.Job.Queue}
	if jc, err := workflow.JobContextOf(res.Job); err == nil {
		ident.ProcessInstanceID, ident.ActivityID, ident.JobDefinitionID = jc.ProcessInstanceID, jc.ActivityID, jc.JobDefinitionID
	}
	if err := t.store.Attach(ctx, tx, created.TimerID, ident); err != nil {
		return nil, err
	}
	return &TimerInsertResult{TimerID: created.TimerID, DueAt: created.First.At, Job: res}, nil
}

// newTemplate encodes the timer's template: the job context as given and
// the MaxAttempts asked for (opts, then the args' own options).
func newTemplate(given workflow.JobContext, args river.JobArgs, opts *river.InsertOpts) (string, error) {
	ctxJSON, err := json.Marshal(given)
	if err != nil {
		return "", err
	}
	maxAttempts := opts.MaxAttempts
	if withOpts, ok := args.(river.JobArgsWithInsertOpts); ok && maxAttempts == 0 {
		maxAttempts = withOpts.InsertOpts().MaxAttempts
	}
	encoded, err := json.Marshal(timer.Template{Context: ctxJSON, MaxAttempts: maxAttempts})
	return string(encoded), err
}

// timerJobArgs are args whose JobContext has no job type, given the timer
// job type: River sees the inner args' kind, JSON and insert options.
type timerJobArgs struct {
	inner river.JobArgs
	jc    workflow.JobContext
}

func (a timerJobArgs) Kind() string                    { return a.inner.Kind() }
func (a timerJobArgs) JobContext() workflow.JobContext { return a.jc }
func (a timerJobArgs) MarshalJSON() ([]byte, error)    { return json.Marshal(a.inner) }
func (a timerJobArgs) InsertOpts() river.InsertOpts {
	if withOpts, ok := a.inner.(river.JobArgsWithInsertOpts); ok {
		return withOpts.InsertOpts()
	}
	return river.InsertOpts{}
}

// occurrenceArgs are the args of a later occurrence: its predecessor's kind
// and encoded args.
type occurrenceArgs struct {
	kind string
	args json.RawMessage
}

func (a occurrenceArgs) Kind() string                 { return a.kind }
func (a occurrenceArgs) MarshalJSON() ([]byte, error) { return a.args, nil }

// insertOccurrence returns the timer.InsertFunc of a client: it inserts an
// occurrence through client, from the template, so that the engine's
// insert middleware resolves its job context again.
func insertOccurrence(client *river.Client[pgx.Tx]) timer.InsertFunc {
	return func(ctx context.Context, tx pgx.Tx, next timer.NextOccurrence) (int64, error) {
		var jc workflow.JobContext
		if err := json.Unmarshal(next.Template.Context, &jc); err != nil {
			return 0, fmt.Errorf("the template's job context %s: %w", next.Template.Context, err)
		}
		metadata, err := jc.AddToMetadata(next.OtherMeta)
		if err != nil {
			return 0, err
		}
		timerMeta, err := json.Marshal(next.Metadata)
		if err != nil {
			return 0, err
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(metadata, &fields); err != nil {
			return 0, err
		}
		fields[timer.MetadataKey] = timerMeta
		if metadata, err = json.Marshal(fields); err != nil {
			return 0, err
		}
		res, err := client.InsertTx(ctx, tx, occurrenceArgs{kind: next.Kind, args: next.Args}, &river.InsertOpts{
			MaxAttempts: next.Template.MaxAttempts,
			Metadata:    metadata,
			Priority:    next.Priority,
			Queue:       next.Queue,
			ScheduledAt: next.At,
			Tags:        next.Tags,
		})
		if err != nil {
			return 0, err
		}
		return res.Job.ID, nil
	}
}

// queueOf is the queue River will use: opts, then the args' own options,
// then the default queue. InsertTx records the one River really used.
func queueOf(args river.JobArgs, opts *river.InsertOpts) string {
	if opts.Queue != "" {
		return opts.Queue
	}
	if withOpts, ok := args.(river.JobArgsWithInsertOpts); ok {
		if q := withOpts.InsertOpts().Queue; q != "" {
			return q
		}
	}
	return river.QueueDefault
}

// dueOf is the due date of the occurrence job: its scheduled_at, or, when
// it was run early by workflow.Engine.ExecuteJob, the due date it had then
// (metadata key workflow.ExecutedDueMetadataKey), so that a cycle goes on
// from its own schedule.
func dueOf(job *rivertype.JobRow, fields map[string]json.RawMessage) time.Time {
	if raw, ok := fields[workflow.ExecutedDueMetadataKey]; ok {
		var due time.Time
		if err := json.Unmarshal(raw, &due); err == nil {
			return due
		}
	}
	return job.ScheduledAt
}

// Firing describes the timer occurrence a worker is running; read it with
// FiringFromContext.
type Firing struct {
	// TimerID and Occurrence (1 = the first) identify the occurrence.
	TimerID    int64
	Occurrence int64
	// NextJobID and Next are the following occurrence's job and due date,
	// zero when the timer has none.
	NextJobID int64
	Next      time.Time
	// Ended is true when no occurrence follows this one.
	Ended bool
}

type firingKey struct{}

// FiringFromContext returns the timer occurrence being worked, inside a
// worker of a timer job run through Timers.Middleware.
func FiringFromContext(ctx context.Context) (*Firing, bool) {
	f, ok := ctx.Value(firingKey{}).(*Firing)
	return f, ok
}

// Middleware returns the River worker middleware that runs the timer
// lifecycle. Add it to river.Config.Middleware of every client that works
// timer jobs. When an occurrence of a cycle starts, before the worker runs,
// it creates the next occurrence in a transaction of its own (or ends the
// cycle), so:
//
//   - a failing firing does not stop the cycle: the next occurrence exists
//     already, and the failed one follows its own retry cycle (its retries
//     do not create occurrences again);
//   - a process killed after that commit leaves the next occurrence in
//     place; one killed before it leaves the occurrence running, and the
//     run River's rescuer gives it creates the next occurrence then;
//   - two runs of one occurrence never create two next occurrences: the
//     timer row is locked and River's unique index on unique_key refuses
//     a second copy of (timer, occurrence).
//
// Jobs that are not timers pass through after one bytes.Contains on their
// metadata.
func (t *Timers) Middleware() rivertype.WorkerMiddleware { return &timerMiddleware{timers: t} }

type timerMiddleware struct {
	river.MiddlewareDefaults

	timers *Timers
}

var metadataMarker = []byte(`"` + timer.MetadataKey + `"`)

func (m *timerMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if !bytes.Contains(job.Metadata, metadataMarker) {
		return doInner(ctx)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(job.Metadata, &fields); err != nil {
		return doInner(ctx)
	}
	raw, ok := fields[timer.MetadataKey]
	if !ok {
		return doInner(ctx)
	}
	var meta timer.JobMetadata
	if err := json.Unmarshal(raw, &meta); err != nil || meta.TimerID == 0 || meta.Occurrence < 1 {
		return fmt.Errorf("handlers: job %d: metadata[%q] = %s is not a timer occurrence", job.ID, timer.MetadataKey, raw)
	}
	if m.timers.dbPool == nil {
		return errors.New("handlers: Timers has no database pool; pass one to NewTimers")
	}
	var insert timer.InsertFunc
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		insert = insertOccurrence(client)
	}
	res, err := m.timers.store.Fire(ctx, m.timers.dbPool, job.ID, meta, dueOf(job, fields), insert)
	if err != nil {
		return err
	}
	firing := &Firing{TimerID: meta.TimerID, Occurrence: meta.Occurrence, NextJobID: res.NextJobID, Next: res.Next, Ended: res.Ended}
	return doInner(context.WithValue(ctx, firingKey{}, firing))
}
