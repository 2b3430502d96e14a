package diagnose

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/hold"
	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
	"github.com/riverbpmn/riverbpmn/lifecycle"
	"github.com/riverbpmn/riverbpmn/liveness"
)

//go:embed sql/*.sql
var sqlFS embed.FS

var factsSQL = sqltemplate.MustRead(sqlFS, "sql/facts.sql")

// ErrJobNotFound is returned (wrapped) for a job id that does not exist.
var ErrJobNotFound = errors.New("no such job")

// Code names one reason a job is not running.
type Code string

// The reasons, in the order Diagnosis.Reasons lists them.
const (
	// Running: the job runs now; nothing holds it back.
	Running Code = "running"
	// Finished: the job completed or was cancelled; it will not run again.
	Finished Code = "finished"
	// Expired: the job's expiration time passed before it started.
	Expired Code = "expired"
	// Incident: the job ran out of retries (discarded); it runs again only
	// when an operator sets its retries.
	Incident Code = "incident"
	// Suspended: the job is held for a suspension of itself, its process
	// instance, job definition or process definition.
	Suspended Code = "suspended"
	// Pending: the job was inserted pending (REGARDS' PENDING): stored, not
	// queued; it runs only once queued.
	Pending Code = "pending"
	// Prerequisites: the job waits for jobs it depends on.
	Prerequisites Code = "prerequisites"
	// Held: the job is held for a reason no riverbpmn package names (a
	// hold added by application code).
	Held Code = "held"
	// Scheduled: the job is due later (a timer, a retry's wait, a snooze).
	Scheduled Code = "scheduled"
	// QueuePaused: the job's queue is paused (River's QueuePause).
	QueuePaused Code = "queue_paused"
	// KeyHeld: another job holds the job's exclusive key.
	KeyHeld Code = "key_held"
	// KeyJobsAhead: jobs of the same exclusive key come first.
	KeyJobsAhead Code = "key_jobs_ahead"
	// ClientGone: the job reads running, but the client running it is gone
	// (its liveness session is dead): liveness gives it back, without using
	// an attempt, once the takeover delay has passed.
	ClientGone Code = "client_gone"
	// NoLiveClient: clients record liveness sessions, and none is alive.
	NoLiveClient Code = "no_live_client"
	// Ready: the job is available and nothing the database knows holds it
	// back: the next fetch of a client working its queue takes it.
	Ready Code = "ready"
)

// Target is a suspended target covering the job.
type Target struct {
	// Type is process_instance, job_definition or process_definition.
	Type string `json:"type"`
	ID   string `json:"id"`
	// Since is when it was suspended.
	Since time.Time `json:"since"`
}

// Reason is one reason a job is not running, with what an operator can do.
type Reason struct {
	Code Code `json:"code"`
	// Text says it in one sentence.
	Text string `json:"text"`
	// Fix says what an operator can do about it; empty when nothing is to
	// be done (the job is due later, or finished).
	Fix string `json:"fix,omitempty"`
	// Since is when the reason began (held since, suspended since, key
	// taken at, paused at); At is when it ends or ended (due at, expires
	// or expired at). Either may be nil.
	Since *time.Time `json:"since,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	// Key, HolderJobID, HolderClientID and HolderClientAlive describe the
	// exclusive key and who holds it (KeyHeld, KeyJobsAhead).
	Key               string `json:"key,omitempty"`
	HolderJobID       int64  `json:"holder_job_id,omitempty"`
	HolderClientID    string `json:"holder_client_id,omitempty"`
	HolderClientAlive *bool  `json:"holder_client_alive,omitempty"`
	// JobsAhead counts the jobs of the same key that run first.
	JobsAhead int `json:"jobs_ahead,omitempty"`
	// SuspendedBy are the suspended targets covering the job; empty for a
	// job suspended by itself.
	SuspendedBy []Target `json:"suspended_by,omitempty"`
	// Prerequisites are the prerequisites not completed yet.
	Prerequisites []lifecycle.Prerequisite `json:"prerequisites,omitempty"`
	// Queue names the paused queue (QueuePaused).
	Queue string `json:"queue,omitempty"`
	// Hold names an application's hold reason (Held).
	Hold string `json:"hold,omitempty"`
}

// Diagnosis is the answer to "why is this job not running?".
type Diagnosis struct {
	JobID int64              `json:"job_id"`
	State rivertype.JobState `json:"state"`
	Kind  string             `json:"kind"`
	Queue string             `json:"queue"`
	// ProcessInstanceID, ProcessDefinitionKey, JobDefinitionID,
	// DeploymentID and Priority are from the job context (empty or nil
	// without one): what to compare with the clients' acquisition settings.
	ProcessInstanceID    string `json:"process_instance_id,omitempty"`
	ProcessDefinitionKey string `json:"process_definition_key,omitempty"`
	JobDefinitionID      string `json:"job_definition_id,omitempty"`
	DeploymentID         string `json:"deployment_id,omitempty"`
	Priority             *int64 `json:"priority,omitempty"`
	// ExclusiveScope is the exclusive scope in force ("none", "process
	// instance", "root process instance").
	ExclusiveScope string `json:"exclusive_scope"`
	// Waiting is true for a job that has not finished and does not run.
	Waiting bool `json:"waiting"`
	// Reasons are why, most decisive first. A waiting job always has at
	// least one (Ready when nothing holds it back).
	Reasons []Reason `json:"reasons"`
	// Unknown lists what could also keep the job waiting but is not
	// recorded in the database, so was not checked.
	Unknown []string `json:"unknown,omitempty"`
	// CheckedAt is the database's clock when the facts were read.
	CheckedAt time.Time `json:"checked_at"`
}

// Has reports whether d has a reason with code c.
func (d *Diagnosis) Has(c Code) bool {
	return slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == c })
}

// Reason returns d's reason with code c, or nil.
func (d *Diagnosis) Reason(c Code) *Reason {
	for i := range d.Reasons {
		if d.Reasons[i].Code == c {
			return &d.Reasons[i]
		}
	}
	return nil
}

// Exclusive is what the engine knows of the job's exclusive key under the
// scope in force.
type Exclusive struct {
	// Scope is the exclusive scope in force, by name.
	Scope string
	// Key is the job's key; empty when it has none.
	Key string
	// HolderJobID, HolderAttempt, HolderClientID and LockedAt describe the
	// lock on Key when another job's live attempt holds it (HolderJobID 0
	// otherwise).
	HolderJobID    int64
	HolderClientID string
	LockedAt       time.Time
	// JobsAhead counts the available jobs of the key that come first.
	JobsAhead int
}

// DB is what Diagnose reads with: pgxpool.Pool, pgx.Conn and pgx.Tx have it.
type DB = hold.DB

// facts is one row of sql/facts.sql.
type facts struct {
	state                                    string
	queue, kind                              string
	scheduledAt                              time.Time
	attempt, maxAttempts                     int16
	lastError                                *string
	instance, definition, jobDef, deployment *string
	priority                                 *int64
	pausedAt                                 *time.Time
	holds                                    []string
	heldSince                                *time.Time
	suspendedBy                              []string
	suspendedAt                              []time.Time
	metadata                                 []byte
	now                                      time.Time
	attemptedBy                              *string
	attemptedAt                              *time.Time
}

// Diagnose says why job jobID of schema is not running: it reads the job,
// its holds, the suspensions covering it, its prerequisites, its queue and
// the clients' liveness sessions, and adds ex, the engine's view of its
// exclusive key. An unknown job is an error wrapping ErrJobNotFound.
func Diagnose(ctx context.Context, db DB, schema string, jobID int64, ex Exclusive) (*Diagnosis, error) {
	var f facts
	err := db.QueryRow(ctx, sqltemplate.Render(factsSQL, schema), jobID).Scan(
		&f.state, &f.queue, &f.kind, &f.scheduledAt, &f.attempt, &f.maxAttempts, &f.lastError,
		&f.instance, &f.definition, &f.jobDef, &f.deployment, &f.priority,
		&f.pausedAt, &f.holds, &f.heldSince, &f.suspendedBy, &f.suspendedAt, &f.metadata, &f.now,
		&f.attemptedBy, &f.attemptedAt,
	)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("diagnose: job %d: %w", jobID, ErrJobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("diagnose: reading job %d: %w", jobID, err)
	}
	var deps *lifecycle.Progress
	if slices.Contains(f.holds, string(lifecycle.Prerequisites)) {
		if deps, err = lifecycle.Dependencies(ctx, db, schema, jobID); err != nil {
			return nil, fmt.Errorf("diagnose: %w", err)
		}
	}
	sessions, err := liveness.Sessions(ctx, db, schema)
	if err != nil {
		return nil, fmt.Errorf("diagnose: %w", err)
	}
	return explain(jobID, &f, deps, sessions, ex), nil
}

// explain turns the facts into a diagnosis.
func explain(jobID int64, f *facts, deps *lifecycle.Progress, sessions []*liveness.Session, ex Exclusive) *Diagnosis {
	d := &Diagnosis{
		JobID: jobID, State: rivertype.JobState(f.state), Kind: f.kind, Queue: f.queue,
		ProcessInstanceID: deref(f.instance), ProcessDefinitionKey: deref(f.definition),
		JobDefinitionID: deref(f.jobDef), DeploymentID: deref(f.deployment), Priority: f.priority,
		ExclusiveScope: ex.Scope, CheckedAt: f.now.UTC(), Reasons: []Reason{},
	}
	add := func(r Reason) { d.Reasons = append(d.Reasons, r) }
	expiresAt, expires := lifecycle.ExpiresAt(f.metadata)

	switch d.State {
	case rivertype.JobStateRunning:
		client := deref(f.attemptedBy)
		r := Reason{Code: Running, Text: "The job is running now.", HolderClientID: client}
		if client != "" {
			r.Text = fmt.Sprintf("The job is running now. It runs on client %s.", client)
		}
		session := sessionOf(sessions, client, f.attemptedAt)
		if session != nil {
			alive := session.Alive && session.DeadSince == nil
			r.HolderClientAlive = &alive
		}
		add(r)
		if session != nil && !*r.HolderClientAlive {
			add(goneReason(session, d.JobID))
			d.Waiting = true
		}
		return d
	case rivertype.JobStateCompleted:
		add(Reason{Code: Finished, Text: "The job completed; it does not run again."})
		return d
	case rivertype.JobStateCancelled:
		add(Reason{Code: Finished, Text: "The job was cancelled (stopped); it does not run again."})
		return d
	case rivertype.JobStateDiscarded:
		if expires && f.lastError != nil && *f.lastError == lifecycle.ExpiryMessage(expiresAt) {
			at := expiresAt.UTC()
			add(Reason{Code: Expired, At: &at,
				Text: fmt.Sprintf("The job expired at %s before it started, and was discarded.", at.Format(time.RFC3339)),
				Fix:  "Expiry is final: insert a new job if the work is still wanted."})
			return d
		}
		add(Reason{Code: Incident,
			Text: fmt.Sprintf("The job ran out of retries after %d attempt(s) and was discarded (an incident): %s", f.attempt, deref(f.lastError)),
			Fix:  "Fix the cause, then set its retries (console: Retry; CLI: riverbpmn retries JOB 1)."})
		return d
	}
	d.Waiting = true

	if expires && !expiresAt.After(f.now) {
		at := expiresAt.UTC()
		add(Reason{Code: Expired, At: &at,
			Text: fmt.Sprintf("The job's expiration time %s has passed: the leader's expiry service discards it within a second or so; it never starts.", at.Format(time.RFC3339)),
			Fix:  "Expiry is final: insert a new job if the work is still wanted."})
	}

	holdState, _ := hold.Of(f.metadata)
	var since *time.Time
	if holdState != nil && !holdState.Since.IsZero() {
		s := holdState.Since.UTC()
		since = &s
	} else if f.heldSince != nil {
		s := f.heldSince.UTC()
		since = &s
	}
	for _, reason := range f.holds {
		switch hold.Reason(reason) {
		case hold.Suspended:
			r := Reason{Code: Suspended, Since: since}
			for i, t := range f.suspendedBy {
				typ, id, _ := strings.Cut(t, ":")
				r.SuspendedBy = append(r.SuspendedBy, Target{Type: typ, ID: id, Since: f.suspendedAt[i].UTC()})
			}
			if len(r.SuspendedBy) == 0 {
				r.Text = "The job itself is suspended."
				r.Fix = "Activate the job (console: Activate; CLI: riverbpmn activate --job JOB)."
			} else {
				var names []string
				for _, t := range r.SuspendedBy {
					names = append(names, fmt.Sprintf("%s %q (since %s)", strings.ReplaceAll(t.Type, "_", " "), t.ID, t.Since.Format(time.RFC3339)))
				}
				r.Text = "The job is suspended by " + strings.Join(names, ", ") + "."
				r.Fix = "Activate what suspends it (console: Activate on the instance or definition; CLI: riverbpmn activate), or the job alone."
			}
			add(r)
		case lifecycle.Pending:
			add(Reason{Code: Pending, Since: since,
				Text: "The job is pending: it was stored without being queued, and waits until it is.",
				Fix:  "Queue it (console: Queue; CLI: riverbpmn queue JOB)."})
		case lifecycle.Prerequisites:
			r := Reason{Code: Prerequisites, Since: since}
			var open []string
			if deps != nil {
				for _, p := range deps.Prerequisites {
					if p.State == rivertype.JobStateCompleted {
						continue
					}
					r.Prerequisites = append(r.Prerequisites, p)
					state := string(p.State)
					if state == "" {
						state = "deleted"
					}
					open = append(open, fmt.Sprintf("%d (%s)", p.JobID, state))
				}
				r.Text = fmt.Sprintf("The job waits for its prerequisites: %d of %d completed; waiting for %s.", deps.Done, deps.Total, strings.Join(open, ", "))
				if deps.Blocked > 0 {
					r.Fix = "A prerequisite ended discarded or cancelled: retry it (set its retries); the job is released when all have completed."
				} else {
					r.Fix = "Nothing to do: it is released when its last prerequisite completes. See why each prerequisite is not running."
				}
			} else {
				r.Text = "The job waits for its prerequisites."
			}
			add(r)
		default:
			add(Reason{Code: Held, Since: since, Hold: reason,
				Text: fmt.Sprintf("The job is held for %q, a reason the application added.", reason),
				Fix:  "Remove the hold through the application that added it."})
		}
	}
	if d.State == rivertype.JobStatePending && len(f.holds) == 0 {
		// River's InsertOpts.Pending, without a riverbpmn hold.
		add(Reason{Code: Pending,
			Text: "The job is pending (River's InsertOpts.Pending): it waits until it is queued.",
			Fix:  "Queue it (console: Queue; CLI: riverbpmn queue JOB)."})
	}

	if (d.State == rivertype.JobStateScheduled || d.State == rivertype.JobStateRetryable) && f.scheduledAt.After(f.now) {
		at := f.scheduledAt.UTC()
		text := fmt.Sprintf("The job is scheduled for %s (in %s).", at.Format(time.RFC3339), f.scheduledAt.Sub(f.now).Round(time.Second))
		if d.State == rivertype.JobStateRetryable {
			text = fmt.Sprintf("Attempt %d failed; the job is retried at %s (in %s): %s", f.attempt, at.Format(time.RFC3339), f.scheduledAt.Sub(f.now).Round(time.Second), deref(f.lastError))
		}
		add(Reason{Code: Scheduled, At: &at, Text: text})
	} else if held := len(f.holds) > 0 || d.State == rivertype.JobStatePending; held && f.scheduledAt.After(f.now) {
		at := f.scheduledAt.UTC()
		add(Reason{Code: Scheduled, At: &at,
			Text: fmt.Sprintf("Once released, the job is due at %s.", at.Format(time.RFC3339))})
	}

	if f.pausedAt != nil {
		s := f.pausedAt.UTC()
		add(Reason{Code: QueuePaused, Since: &s, Queue: f.queue,
			Text: fmt.Sprintf("The job's queue %q is paused (since %s): no client fetches from it.", f.queue, s.Format(time.RFC3339)),
			Fix:  "Resume the queue (River: Client.QueueResume, or River UI)."})
	}

	// The key's holder holds back every waiting job of the key, whatever
	// else holds it: a suspended or scheduled job waits for the key too once
	// released.
	if ex.Key != "" && ex.HolderJobID != 0 {
		s := ex.LockedAt.UTC()
		r := Reason{Code: KeyHeld, Key: ex.Key, HolderJobID: ex.HolderJobID, HolderClientID: ex.HolderClientID, Since: &s,
			Text: fmt.Sprintf("Its exclusive key %q (scope: %s) is held by job %d on client %s since %s.", ex.Key, ex.Scope, ex.HolderJobID, ex.HolderClientID, s.Format(time.RFC3339)),
			Fix:  fmt.Sprintf("Nothing, normally: it starts when job %d ends. If job %d is stuck, see why (riverbpmn why %d) or stop it.", ex.HolderJobID, ex.HolderJobID, ex.HolderJobID)}
		if d.State != rivertype.JobStateAvailable {
			r.Text += fmt.Sprintf(" Once the reasons above let it go, it also waits for job %d to end.", ex.HolderJobID)
		}
		if alive, known := clientAlive(sessions, ex.HolderClientID); known {
			r.HolderClientAlive = &alive
			if !alive {
				r.Text += " That client is gone: it has no live session."
				r.Fix = fmt.Sprintf("Nothing: liveness gives job %d back (no attempt used) and frees the key within seconds of its client's session dying (the takeover delay, 3 s by default); if the key stays held, check that a client with liveness runs, since the takeover runs on River's leader.", ex.HolderJobID)
			}
		}
		add(r)
	}
	if d.State == rivertype.JobStateAvailable && ex.Key != "" {
		if ex.JobsAhead > 0 {
			add(Reason{Code: KeyJobsAhead, Key: ex.Key, JobsAhead: ex.JobsAhead,
				Text: fmt.Sprintf("%d job(s) of its exclusive key %q come before it; they run first, one at a time.", ex.JobsAhead, ex.Key)})
		}
	}

	if len(sessions) > 0 {
		alive := 0
		for _, s := range sessions {
			if s.Alive {
				alive++
			}
		}
		if alive == 0 {
			add(Reason{Code: NoLiveClient,
				Text: fmt.Sprintf("None of the %d client session(s) recorded is alive: no riverbpmn client with liveness is running.", len(sessions)),
				Fix:  "Start a client (check the workers' deployment and logs)."})
		}
	}

	if len(d.Reasons) == 0 {
		if d.State == rivertype.JobStateAvailable {
			add(Reason{Code: Ready,
				Text: fmt.Sprintf("The job is available: nothing recorded holds it back; the next fetch of a client working queue %q takes it.", f.queue),
				Fix:  "If it stays available, check that a client works this queue and kind, and its acquisition settings (below)."})
		} else {
			at := f.scheduledAt.UTC()
			add(Reason{Code: Scheduled, At: &at,
				Text: fmt.Sprintf("The job is %s and due (since %s): River's scheduler makes it available within a second or so.", d.State, at.Format(time.RFC3339))})
		}
	}
	d.Unknown = []string{
		"clients' priority ranges, deployments and tenants (acquisition settings are kept in each client's memory, not in the database): " +
			"compare the job's priority and deployment above with the clients' configuration",
		"whether a running client has a worker for kind " + f.kind + " and works queue " + f.queue,
	}
	return d
}

// sessionOf returns the liveness session of clientID that was current at
// attemptedAt (nil if none is recorded).
func sessionOf(sessions []*liveness.Session, clientID string, attemptedAt *time.Time) *liveness.Session {
	if clientID == "" || attemptedAt == nil {
		return nil
	}
	for _, s := range sessions {
		if s.ClientID == clientID && !attemptedAt.Before(s.Started) && (s.Superseded == nil || attemptedAt.Before(*s.Superseded)) {
			return s
		}
	}
	return nil
}

// goneReason is the reason of a running job whose client's session is
// dead.
func goneReason(s *liveness.Session, jobID int64) Reason {
	r := Reason{Code: ClientGone, HolderClientID: s.ClientID, HolderJobID: jobID,
		Text: fmt.Sprintf("Its client %s is gone: the client's liveness session %d no longer holds its lock", s.ClientID, s.ID),
		Fix: "Nothing: the liveness takeover on River's leader gives the job back (no attempt used), frees its exclusive key and runs it again, " +
			"within seconds (the takeover delay, 3 s by default). If it stays running, check that a client with liveness runs: the takeover runs on the leader."}
	if s.DeadSince != nil {
		since := s.DeadSince.UTC()
		r.Since = &since
		r.Text += fmt.Sprintf(" (seen dead since %s)", since.Format(time.RFC3339))
	}
	r.Text += "; the job reads running only until it is given back."
	return r
}

// clientAlive says whether clientID has a live liveness session, and
// whether it has any session at all (known).
func clientAlive(sessions []*liveness.Session, clientID string) (alive, known bool) {
	for _, s := range sessions {
		if s.ClientID != clientID {
			continue
		}
		known = true
		if s.Alive && s.Superseded == nil {
			alive = true
		}
	}
	return alive, known
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
