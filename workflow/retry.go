package workflow

import (
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/retrypolicy"
)

// Retry time cycles live in package retrypolicy (the cycles, the policy's
// rule, the insert-time resolution and the conflict snoozes); this file
// wires them to the engine: the job-context reader they are given
// (contextRetryCycle), the engine's policy type and the deprecated names.

// MaxAttemptsUnbounded is the max_attempts of a job whose retry cycle is
// unbounded (R/<duration>).
//
// Deprecated: use retrypolicy.MaxAttemptsUnbounded.
const MaxAttemptsUnbounded = retrypolicy.MaxAttemptsUnbounded

// RetryCycleMetadataKey is the metadata key of a plain River job's retry
// cycle.
//
// Deprecated: use retrypolicy.CycleMetadataKey.
const RetryCycleMetadataKey = retrypolicy.CycleMetadataKey

// ErrConflict marks a failure caused by a concurrency conflict.
//
// Deprecated: use retrypolicy.ErrConflict (the same value).
var ErrConflict = retrypolicy.ErrConflict

// IsConflict reports whether err is a conflict failure.
//
// Deprecated: use retrypolicy.IsConflict.
func IsConflict(err error) bool { return retrypolicy.IsConflict(err) }

// RetryPolicy is a river.ClientRetryPolicy that applies retry time cycles.
// It is river.Config.RetryPolicy of every client that works BPMN jobs;
// NewClient and Engine.ClientConfig set it (keeping a policy already set as
// Fallback).
//
// It answers with retrypolicy.NextRetry, reading the cycle each job was
// given at insert from its job context: for a job with a recorded cycle,
// failure time + the cycle's interval chosen by Camunda's interval-index
// rule; every other job (plain River jobs, and jobs whose recorded cycle
// cannot be read) is left to Fallback.
//
// The job is due at that time; it runs when a client next fetches: a retry
// due within River's scheduler interval (5 s) is stored as available and is
// seen at the next poll (FetchPollInterval, 1 s by default), so R3/PT1S shows
// gaps of 1.0-2.1 s; a later one is stored as retryable and made available
// by River's scheduler, up to 5 s after it is due.
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

// NextRetry returns when a failed job runs again: now plus the interval of
// its retry cycle, or Fallback's answer for a job without one.
func (p *RetryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return retrypolicy.NextRetry(job, contextRetryCycle, p.Fallback)
}

// RetryPolicy returns a RetryPolicy (with River's default as fallback), the
// one NewClient sets as river.Config.RetryPolicy. It is the same as
// &workflow.RetryPolicy{}.
func (e *Engine) RetryPolicy() *RetryPolicy { return &RetryPolicy{} }

// contextRetryCycle is the engine's retrypolicy.ContextCycleFunc: the
// retry_cycle field of the job context in metadata.
func contextRetryCycle(metadata []byte) (json.RawMessage, bool, error) {
	fields, found, err := metadataContextFields(metadata)
	if err != nil || !found {
		return nil, found, err
	}
	return fields.field("retry_cycle"), true, nil
}

// retryCycleOf returns the retry cycle recorded on job at insert
// (retrypolicy.CycleOf with the engine's job contexts).
func retryCycleOf(job *rivertype.JobRow) (retrypolicy.Cycle, bool) {
	return retrypolicy.CycleOf(job, contextRetryCycle)
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
	if problem := retrypolicy.MaxAttemptsProblem(cycle); problem != "" {
		return retrypolicy.Cycle{}, &DefinitionError{Definition: "engine config", Field: field, Value: s, Problem: problem}
	}
	return cycle, nil
}

// resolveRetryCycle picks a job's cycle (retrypolicy.ResolveCycle: job
// definition > the context's own > engine default > none), records it in jc
// in canonical form and sets params.MaxAttempts from it.
func (e *Engine) resolveRetryCycle(jc *JobContext, defCycle retrypolicy.Cycle, params *rivertype.JobInsertParams) error {
	cycle, problem := retrypolicy.ResolveCycle(defCycle, jc.RetryCycle, e.defaultRetryCycle)
	if problem != "" {
		return &JobContextError{Field: "retry_cycle", Value: jc.RetryCycle, Problem: problem}
	}
	jc.RetryCycle = cycle.String()
	params.MaxAttempts = retrypolicy.MaxAttempts(cycle)
	return nil
}
