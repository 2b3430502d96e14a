package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/job"
	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// Retry time cycles, River style.
//
// Camunda keeps a job's "retries" (executions left) in a column it
// decrements on failure. River keeps the executions done so far (attempt,
// incremented at fetch) and the total allowed (max_attempts). riverbpmn maps
// one onto the other without new columns:
//
//   - at insert, the middleware resolves the job's cycle (job definition >
//     job context > Config.Retry.DefaultCycle > none), records it in the job's
//     metadata and sets MaxAttempts to the cycle's number of executions;
//   - after a failure River asks its ClientRetryPolicy when to retry;
//     RetryPolicy answers from the recorded cycle with Camunda's
//     interval-index rule, where the executions left before the failure are
//     max_attempts - attempt + 1;
//   - a conflict failure (ErrConflict, Postgres 40001 or 40P01) is turned
//     into a River snooze by the work middleware: River then gives the
//     execution back (attempt - 1) and the job waits the interval;
//   - when River discards the job, a trigger of migration riverbpmn/004 opens
//     a failedJob incident in the same transaction; SetJobRetries revives it.

// MaxAttemptsUnbounded is the max_attempts of a job whose retry cycle is
// unbounded (R/<duration>): the largest value River's smallint column holds.
// Such a job is never discarded for running out of executions: when one of
// its failures happens at attempt 1000 or later, the trigger
// river_bpmn_job_renew_unbounded (migration riverbpmn/004) rewinds its attempt
// to 0 and keeps only its last 20 errors, in the same UPDATE that River uses
// to schedule the retry. Its attempt therefore counts the executions since the
// last renewal, and its errors never grow without bound (River appends one
// per failure, and an R/PT1S job fails 86,400 times a day).
const MaxAttemptsUnbounded = job.MaxAttemptsUnbounded

// The renewal thresholds of unbounded jobs; the trigger of migration
// riverbpmn/004 has the same numbers.
const (
	unboundedRenewAtAttempt = 1000
	unboundedKeptErrors     = 20
)

// RetryCycleMetadataKey is the metadata key under which the insert middleware
// records the retry cycle of a plain River job (one without a job context)
// when Config.Retry.DefaultCycle is set. The job stays a plain job (it has no
// "bpmn" key): it gets the cycle's executions and waits, but no incident when
// it is discarded. Jobs with a job context keep their cycle in the context
// (JobContext.RetryCycle) instead.
const RetryCycleMetadataKey = "bpmn_retry_cycle"

// ErrConflict marks a failure caused by a concurrency conflict (Camunda's
// optimistic locking exception). A worker whose error wraps it, as in
//
//	return fmt.Errorf("joining branch: %w", workflow.ErrConflict)
//
// does not use up one of the job's executions, but the job still waits its
// cycle's interval before it runs again (and runs again at once without a
// cycle). A *pgconn.PgError with code 40001 (serialization failure) or 40P01
// (deadlock detected) anywhere in the error's chain counts as a conflict too.
// See IsConflict.
var ErrConflict = errors.New("workflow: concurrency conflict")

// IsConflict reports whether err is a conflict failure: it wraps ErrConflict,
// or a *pgconn.PgError with code 40001 or 40P01, anywhere in its chain
// (including every branch of errors.Join).
func IsConflict(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrConflict) {
		return true
	}
	// errors.As would stop at the first PgError; a chain may hold several.
	const maxNodes = 1000 // a guard against pathological Unwrap cycles
	stack := []error{err}
	for visited := 0; len(stack) > 0 && visited < maxNodes; visited++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pgErr, ok := e.(*pgconn.PgError); ok && (pgErr.Code == "40001" || pgErr.Code == "40P01") {
			return true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				stack = append(stack, next)
			}
		case interface{ Unwrap() []error }:
			for _, next := range u.Unwrap() {
				if next != nil {
					stack = append(stack, next)
				}
			}
		}
	}
	return false
}

// RetryPolicy is a river.ClientRetryPolicy that applies retry time cycles.
// It is river.Config.RetryPolicy of every client that works BPMN jobs;
// NewClient and Engine.ClientConfig set it (keeping a policy already set as
// Fallback).
//
// For a job whose cycle was recorded at insert (a job with a job context, or
// a plain job inserted while Config.Retry.DefaultCycle was set), the next
// execution is at failure time + the cycle's interval, chosen by Camunda's
// rule: with N intervals and L executions left before this failure
// (max_attempts - attempt + 1), the index is N - (L - 1), clamped to
// [0, N-1]. Rn/d and R/d always wait d; a job context without a cycle is
// retried at once. Calendar fields (years, months, days) are added in UTC.
// Whether the job is retried at all is River's decision: it discards the job
// when attempt reaches max_attempts, which the insert middleware set from the
// cycle.
//
// The job is due at that time; it runs when a client next fetches: a retry
// due within River's scheduler interval (5 s) is stored as available and is
// seen at the next poll (FetchPollInterval, 1 s by default), so R3/PT1S shows
// gaps of 1.0-2.1 s; a later one is stored as retryable and made available
// by River's scheduler, up to 5 s after it is due.
//
// Every other job is left to Fallback: plain River jobs keep River's own
// behaviour. So is a job whose recorded cycle cannot be read (metadata edited
// by hand: a retry_cycle that does not parse or is not a string, or a "bpmn"
// value that is not an object): it gets River's default exponential backoff
// rather than an error, and its max_attempts is left as stored.
//
// The policy needs nothing but the job row, so the zero value works, and
// clients in other processes apply exactly the cycle each job was given.
//
// A client whose RetryPolicy is not a *RetryPolicy (one embedding it
// counts) logs an error when it starts: its riverbpmn jobs would be retried
// on River's backoff instead of their cycles. NewClient sets it.
type RetryPolicy struct {
	// Fallback decides for jobs without a retry cycle. Nil means River's
	// DefaultClientRetryPolicy.
	Fallback river.ClientRetryPolicy

	// bases are those GetBaseService handed River (retry_wiring.go),
	// guarded by retryPolicyBases' lock.
	bases []*riverBaseService
}

var _ river.ClientRetryPolicy = (*RetryPolicy)(nil)

var defaultFallbackRetryPolicy = &river.DefaultClientRetryPolicy{}

// NextRetry returns when a failed job runs again: now plus the interval of
// its retry cycle, or Fallback's answer for a job without one.
func (p *RetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	cycle, ok := retryCycleOf(job)
	if !ok {
		if p.Fallback != nil {
			return p.Fallback.NextRetry(job)
		}
		return defaultFallbackRetryPolicy.NextRetry(job)
	}
	return cycle.NextRetryAt(time.Now().UTC(), executionsLeft(job))
}

// RetryPolicy returns a RetryPolicy (with River's default as fallback), the
// one NewClient sets as river.Config.RetryPolicy. It is the same as
// &workflow.RetryPolicy{}.
func (e *Engine) RetryPolicy() *RetryPolicy { return &RetryPolicy{} }

// executionsLeft returns Camunda's retries of a running (or just failed) job:
// the executions left counting the one under way.
func executionsLeft(job *rivertype.JobRow) int {
	return max(job.MaxAttempts-job.Attempt+1, 1)
}

// retryCycleOf returns the retry cycle recorded on job at insert, and false
// when it has none (a plain River job) or it cannot be read. A job context
// without a cycle gives the zero Cycle (3 executions, no wait) and true.
func retryCycleOf(job *rivertype.JobRow) (retrypolicy.Cycle, bool) {
	fields, found, err := metadataContextFields(job.Metadata)
	if err != nil {
		return retrypolicy.Cycle{}, false
	}
	if found {
		// Only the cycle is read: bad data elsewhere in the context does not
		// change how the job is retried.
		var retryCycle string
		if value := fields.field("retry_cycle"); value != nil {
			if err := json.Unmarshal(value, &retryCycle); err != nil {
				return retrypolicy.Cycle{}, false
			}
		}
		if retryCycle == "" {
			return retrypolicy.Cycle{}, true
		}
		cycle, err := retrypolicy.ParseCycle(retryCycle)
		return cycle, err == nil
	}

	if !bytes.Contains(job.Metadata, []byte(`"`+RetryCycleMetadataKey+`"`)) {
		return retrypolicy.Cycle{}, false // fast path: a plain River job
	}
	var legacy struct {
		RetryCycle *string `json:"bpmn_retry_cycle"`
	}
	if err := json.Unmarshal(job.Metadata, &legacy); err != nil || legacy.RetryCycle == nil {
		return retrypolicy.Cycle{}, false
	}
	cycle, err := retrypolicy.ParseCycle(*legacy.RetryCycle)
	if err != nil || cycle.IsZero() {
		return retrypolicy.Cycle{}, false
	}
	return cycle, true
}

// maxAttemptsOf returns River's MaxAttempts for a cycle: its number of
// executions, or MaxAttemptsUnbounded.
func maxAttemptsOf(cycle retrypolicy.Cycle) int {
	n, unbounded := cycle.Executions()
	if unbounded {
		return MaxAttemptsUnbounded
	}
	return n
}

// retryCycleProblem says why a parsed cycle cannot be used, or "".
func retryCycleProblem(cycle retrypolicy.Cycle) string {
	if n, unbounded := cycle.Executions(); !unbounded && n > MaxAttemptsUnbounded {
		return fmt.Sprintf("allows %d executions, more than River's max_attempts holds (%d); use R/<duration> for unbounded retries", n, MaxAttemptsUnbounded)
	}
	return ""
}

// parseDefaultRetryCycle parses Config.Retry.DefaultCycle ("" is none);
// its errors name field, the field the configuration set.
func parseDefaultRetryCycle(s, field string) (retrypolicy.Cycle, error) {
	if s == "" {
		return retrypolicy.Cycle{}, nil
	}
	cycle, err := retrypolicy.ParseCycle(s)
	if err != nil {
		return retrypolicy.Cycle{}, &DefinitionError{Definition: "engine config", Field: field, Value: s, Problem: "is not a valid retry time cycle", Err: err}
	}
	if problem := retryCycleProblem(cycle); problem != "" {
		return retrypolicy.Cycle{}, &DefinitionError{Definition: "engine config", Field: field, Value: s, Problem: problem}
	}
	return cycle, nil
}

// resolveRetryCycle picks a job's cycle (job definition > the context's own >
// engine default > none), records it in jc in canonical form and sets
// params.MaxAttempts from it, whatever the insert options said: for a BPMN
// job the cycle decides (no cycle: 3 executions).
func (e *Engine) resolveRetryCycle(jc *JobContext, defCycle retrypolicy.Cycle, params *rivertype.JobInsertParams) error {
	// A given cycle is validated even when the job definition's wins, so
	// that a typo never passes silently.
	var given retrypolicy.Cycle
	if jc.RetryCycle != "" {
		var err error
		if given, err = retrypolicy.ParseCycle(jc.RetryCycle); err != nil {
			return &JobContextError{Field: "retry_cycle", Value: jc.RetryCycle, Problem: "is not a valid retry time cycle: " + err.Error()}
		}
		if problem := retryCycleProblem(given); problem != "" {
			return &JobContextError{Field: "retry_cycle", Value: jc.RetryCycle, Problem: problem}
		}
	}
	cycle := defCycle // the job definition's
	if cycle.IsZero() {
		cycle = given
	}
	if cycle.IsZero() {
		cycle = e.defaultRetryCycle
	}
	jc.RetryCycle = cycle.String()
	params.MaxAttempts = maxAttemptsOf(cycle)
	return nil
}

// applyDefaultRetryCycle gives a plain River job the engine's default cycle,
// if there is one and the job's MaxAttempts is River's default
// (river.MaxAttemptsDefault): MaxAttempts from the cycle and the cycle
// recorded under RetryCycleMetadataKey. A MaxAttempts chosen by the job's
// InsertOpts, its args' InsertOpts or the client's river.Config.MaxAttempts
// is kept, with River's retries, as asked. A job without the cycle keeps
// River's behaviour, and a RetryCycleMetadataKey it carries (copied from
// another job's metadata) is removed so that it cannot disagree with
// MaxAttempts. Metadata that is not a JSON object is left alone (River's
// behaviour).
func (e *Engine) applyDefaultRetryCycle(params *rivertype.JobInsertParams) error {
	withCycle := !e.defaultRetryCycle.IsZero() && params.MaxAttempts == river.MaxAttemptsDefault
	if !withCycle && !bytes.Contains(params.Metadata, []byte(`"`+RetryCycleMetadataKey+`"`)) {
		return nil // stock River: not a byte changed
	}
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params.Metadata)) > 0 {
		if err := json.Unmarshal(params.Metadata, &fields); err != nil || fields == nil {
			return nil // not an object: no room for the cycle, River's behaviour
		}
	}
	if !withCycle {
		if _, ok := fields[RetryCycleMetadataKey]; !ok {
			return nil
		}
		delete(fields, RetryCycleMetadataKey)
	} else {
		encoded, err := json.Marshal(e.defaultRetryCycle.String())
		if err != nil {
			return err
		}
		fields[RetryCycleMetadataKey] = encoded
		params.MaxAttempts = maxAttemptsOf(e.defaultRetryCycle)
	}
	metadata, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	params.Metadata = metadata
	return nil
}
