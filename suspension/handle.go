package suspension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/riverbpmn/riverbpmn/internal/listpage"
	"github.com/riverbpmn/riverbpmn/internal/notfound"
)

// Config is the suspensions' settings in an engine
// (workflow.Config.Suspension).
type Config struct {
	// ServiceInterval is the longest the elected leader waits between two
	// looks for scheduled suspensions that are due (0 means
	// DefaultServiceInterval): a change scheduled by another process is
	// applied at most this late.
	ServiceInterval time.Duration
}

// Opts are the options of suspending or activating a job definition or a
// process definition.
type Opts struct {
	// IncludeJobs also suspends (activates) the existing unfinished jobs,
	// in batches of BatchSize jobs per transaction. Without it, only jobs
	// inserted afterwards are affected.
	IncludeJobs bool

	// At, when in the future, schedules the change instead of making it: it
	// is stored and applied when due by one client (the service River runs
	// on its elected leader), even across restarts. Zero means now.
	At time.Time
}

// Outcome reports a suspension or activation.
type Outcome struct {
	Result

	// ScheduledID is the id of the stored change when Opts.At was in the
	// future (nothing else was done); 0 otherwise.
	ScheduledID int64 `json:"scheduled_id,omitempty"`
	// ScheduledAt is when the scheduled change is due.
	ScheduledAt *time.Time `json:"scheduled_at,omitempty"`
}

// HandleConfig configures a Suspensions handle.
type HandleConfig struct {
	// DB is the database.
	DB DB
	// Schema is the schema of the tables; empty means the search_path.
	Schema string
	// CheckDefinition, if set, is asked before a job definition or process
	// definition is suspended or activated, now or later: its error (such
	// as one for a definition that is neither declared nor stored) aborts
	// the change. The engine checks its declarations there.
	CheckDefinition func(ctx context.Context, t TargetType, id string) error
	// CheckInstance, if set, checks a process instance id before anything
	// is read (the engine checks it is a valid identifier).
	CheckInstance func(id string) error
	// NotFound, if set, is wrapped by the errors for an unknown target (the
	// engine passes its ErrNotFound); nil means ErrNotFound.
	NotFound error
	// AppliedBy names who applies a change made through the handle
	// (ApplyScheduled records it); empty means "manual".
	AppliedBy string
}

// Suspensions is the handle on the suspensions of a schema
// (workflow.Engine.Suspensions): suspend and activate job definitions,
// process definitions, process instances and jobs, now or (definitions)
// scheduled for later; list what is suspended and what is scheduled; apply
// a scheduled change early.
type Suspensions struct {
	config HandleConfig
}

// ErrNotFound is wrapped by the handle's errors for an id or a name that
// names nothing: the one not-found error of every riverbpmn package
// (workflow.ErrNotFound, job.ErrNotFound, ... are this same value).
var ErrNotFound = notfound.Err

// New returns a Suspensions handle.
func New(config HandleConfig) *Suspensions {
	if config.NotFound == nil {
		config.NotFound = ErrNotFound
	}
	if config.AppliedBy == "" {
		config.AppliedBy = "manual"
	}
	return &Suspensions{config: config}
}

func (s *Suspensions) notFound(what string) error {
	if s.config.NotFound != nil {
		return fmt.Errorf("suspension: %s: %w", what, s.config.NotFound)
	}
	return fmt.Errorf("suspension: %s: not found", what)
}

// SuspendJobDefinition suspends job definition id: its jobs inserted from
// now on, by any insert call of any process, are inserted suspended
// (including inserts under way when this call commits), and with
// IncludeJobs its existing unfinished jobs are suspended too. A suspended
// job is never fetched; a running one finishes its current execution.
// Suspending what is suspended does nothing.
func (s *Suspensions) SuspendJobDefinition(ctx context.Context, id string, opts *Opts) (*Outcome, error) {
	return s.changeDefinition(ctx, JobDefinition, id, true, opts)
}

// ActivateJobDefinition activates job definition id: its new jobs are
// inserted active, and with IncludeJobs its suspended jobs are activated,
// each going back exactly where it was going (available, scheduled at its
// due time, or retryable with its wait).
func (s *Suspensions) ActivateJobDefinition(ctx context.Context, id string, opts *Opts) (*Outcome, error) {
	return s.changeDefinition(ctx, JobDefinition, id, false, opts)
}

// SuspendProcessDefinition suspends process definition key: each of its
// job definitions (so their new jobs start suspended) and its new jobs
// without a job definition; with IncludeJobs, its existing jobs too.
func (s *Suspensions) SuspendProcessDefinition(ctx context.Context, key string, opts *Opts) (*Outcome, error) {
	return s.changeDefinition(ctx, ProcessDefinition, key, true, opts)
}

// ActivateProcessDefinition activates process definition key and each of
// its job definitions; with IncludeJobs, its suspended jobs too.
func (s *Suspensions) ActivateProcessDefinition(ctx context.Context, key string, opts *Opts) (*Outcome, error) {
	return s.changeDefinition(ctx, ProcessDefinition, key, false, opts)
}

// SuspendProcessInstance suspends process instance id: all its jobs,
// present and future. An instance with no job (in any state) that is not
// suspended gives an error naming it that wraps the handle's NotFound.
func (s *Suspensions) SuspendProcessInstance(ctx context.Context, id string) (*Outcome, error) {
	return s.changeInstance(ctx, id, true)
}

// ActivateProcessInstance activates process instance id and all its
// suspended jobs.
func (s *Suspensions) ActivateProcessInstance(ctx context.Context, id string) (*Outcome, error) {
	return s.changeInstance(ctx, id, false)
}

// SuspendJob suspends one job (any job, with or without a job context). A
// running job finishes its current execution and is not run again until
// activated. It returns whether the job was not suspended yet; a finished
// job is left alone. An unknown id gives an error naming it that wraps
// ErrJobNotFound and the handle's NotFound.
func (s *Suspensions) SuspendJob(ctx context.Context, jobID int64) (bool, error) {
	return s.changeJob(ctx, jobID, true)
}

// ActivateJob activates one job, whatever suspended it (as in Camunda). The
// job goes back exactly where it was going, unless another reason still
// holds it (package hold). It returns whether the job was suspended.
func (s *Suspensions) ActivateJob(ctx context.Context, jobID int64) (bool, error) {
	return s.changeJob(ctx, jobID, false)
}

func (s *Suspensions) changeDefinition(ctx context.Context, t TargetType, id string, suspend bool, opts *Opts) (*Outcome, error) {
	if opts == nil {
		opts = &Opts{}
	}
	if s.config.CheckDefinition != nil {
		if err := s.config.CheckDefinition(ctx, t, id); err != nil {
			return nil, err
		}
	}
	change := Change{Type: t, ID: id, Suspend: suspend, IncludeJobs: opts.IncludeJobs}
	if !opts.At.IsZero() && opts.At.After(time.Now()) {
		scheduledID, err := Schedule(ctx, s.config.DB, s.config.Schema, change, opts.At)
		if err != nil {
			return nil, err
		}
		at := opts.At.UTC()
		return &Outcome{ScheduledID: scheduledID, ScheduledAt: &at}, nil
	}
	res, err := Apply(ctx, s.config.DB, s.config.Schema, change)
	if err != nil {
		return nil, err
	}
	return &Outcome{Result: *res}, nil
}

func (s *Suspensions) changeInstance(ctx context.Context, id string, suspend bool) (*Outcome, error) {
	if s.config.CheckInstance != nil {
		if err := s.config.CheckInstance(id); err != nil {
			return nil, err
		}
	}
	known, err := InstanceKnown(ctx, s.config.DB, s.config.Schema, id)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, s.notFound(fmt.Sprintf("process instance %q", id))
	}
	res, err := Apply(ctx, s.config.DB, s.config.Schema, Change{Type: ProcessInstance, ID: id, Suspend: suspend, IncludeJobs: true})
	if err != nil {
		return nil, err
	}
	return &Outcome{Result: *res}, nil
}

func (s *Suspensions) changeJob(ctx context.Context, jobID int64, suspend bool) (bool, error) {
	changed, err := SetJob(ctx, s.config.DB, s.config.Schema, jobID, suspend)
	if errors.Is(err, ErrJobNotFound) && s.config.NotFound != nil {
		return false, fmt.Errorf("suspension: job %d: %w (%w)", jobID, ErrJobNotFound, s.config.NotFound)
	}
	return changed, err
}

// ApplyScheduled applies the scheduled change id (Opts.At, listed by
// ListScheduled) now, before it is due, and records it as applied so that
// it is not applied again when due: Camunda's managementService.executeJob
// on the timer job of a delayed suspension, for which riverbpmn stores a
// row rather than a job. It returns the change and what it did. An unknown
// id wraps ErrScheduleNotFound and the handle's NotFound; a change applied
// already is an error saying when.
func (s *Suspensions) ApplyScheduled(ctx context.Context, id int64) (*Scheduled, *Outcome, error) {
	sc, res, err := ApplyScheduled(ctx, s.config.DB, s.config.Schema, id, s.config.AppliedBy)
	if errors.Is(err, ErrScheduleNotFound) && s.config.NotFound != nil {
		return nil, nil, fmt.Errorf("suspension: scheduled change %d: %w (%w)", id, ErrScheduleNotFound, s.config.NotFound)
	}
	if err != nil {
		return nil, nil, err
	}
	return sc, &Outcome{Result: *res}, nil
}

// ListParams selects a page of suspended targets for List.
type ListParams struct {
	// Type keeps only targets of that type ("" all).
	Type TargetType
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is where the page starts: "" for the first page, else the Next
	// of the previous page.
	After string
}

// ListResult is a page of suspended targets, oldest first.
type ListResult struct {
	Items []Suspended `json:"items"`
	// Next is the After of the next page; "" when there is none.
	Next string `json:"next,omitempty"`
}

// List returns a page of the suspended job definitions, process definitions
// and process instances, oldest first. Next is empty exactly when no
// further target is suspended.
func (s *Suspensions) List(ctx context.Context, params *ListParams) (*ListResult, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit, err := listpage.Limit("suspension", params.Limit)
	if err != nil {
		return nil, err
	}
	if params.Type != "" {
		if err := params.Type.Validate(); err != nil {
			return nil, fmt.Errorf("suspension: ListParams.Type: %w", err)
		}
	}
	var after *Suspended
	if params.After != "" {
		// suspended_at in microseconds:type:id (the id may hold colons).
		parts := strings.SplitN(params.After, ":", 3)
		us, perr := int64(0), error(nil)
		if len(parts) == 3 {
			us, perr = strconv.ParseInt(parts[0], 10, 64)
		}
		if len(parts) != 3 || perr != nil {
			return nil, fmt.Errorf("suspension: ListParams.After %q is not a cursor of this listing (as ListResult.Next gives)", params.After)
		}
		after = &Suspended{Since: time.UnixMicro(us).UTC(), Type: TargetType(parts[1]), ID: parts[2]}
	}
	items, err := listAfter(ctx, s.config.DB, s.config.Schema, after, params.Type, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	res := &ListResult{}
	res.Items, res.Next = listpage.Trim(items, limit, func(t Suspended) string {
		return strconv.FormatInt(t.Since.UnixMicro(), 10) + ":" + string(t.Type) + ":" + t.ID
	})
	return res, nil
}

// ListScheduledParams selects a page of scheduled changes for
// ListScheduled.
type ListScheduledParams struct {
	// Limit is the page size: 0 means 100, at most 1,000.
	Limit int
	// After is where the page starts: "" for the first page, else the Next
	// of the previous page.
	After string
}

// ListScheduledResult is a page of scheduled changes, in due order.
type ListScheduledResult struct {
	Items []Scheduled `json:"items"`
	// Next is the After of the next page; "" when there is none.
	Next string `json:"next,omitempty"`
}

// ListScheduled returns a page of the suspensions and activations scheduled
// for later and not yet applied, in due order.
func (s *Suspensions) ListScheduled(ctx context.Context, params *ListScheduledParams) (*ListScheduledResult, error) {
	if params == nil {
		params = &ListScheduledParams{}
	}
	limit, err := listpage.Limit("suspension", params.Limit)
	if err != nil {
		return nil, err
	}
	var after *Scheduled
	if params.After != "" {
		due, id, ok := strings.Cut(params.After, ":")
		us, err1 := strconv.ParseInt(due, 10, 64)
		n, err2 := strconv.ParseInt(id, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("suspension: ListScheduledParams.After %q is not a cursor of this listing (as ListScheduledResult.Next gives)", params.After)
		}
		after = &Scheduled{ID: n, DueAt: time.UnixMicro(us).UTC()}
	}
	items, err := pendingAfter(ctx, s.config.DB, s.config.Schema, after, listpage.Fetch(limit))
	if err != nil {
		return nil, err
	}
	res := &ListScheduledResult{}
	res.Items, res.Next = listpage.Trim(items, limit, func(sc Scheduled) string {
		return strconv.FormatInt(sc.DueAt.UnixMicro(), 10) + ":" + strconv.FormatInt(sc.ID, 10)
	})
	return res, nil
}

// Service returns the leader's service that applies scheduled changes when
// due (see Service), recording clientID as their applier.
func (s *Suspensions) Service(config Config, clientID string, logger *slog.Logger) *Service {
	return NewService(s.config.DB, ServiceConfig{Schema: s.config.Schema, ClientID: clientID, Interval: config.ServiceInterval, Logger: logger})
}
