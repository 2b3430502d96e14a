package retrypolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Retry time cycles, River style.
//
// Camunda keeps a job's "retries" (executions left) in a column it
// decrements on failure. River keeps the executions done so far (attempt,
// incremented at fetch) and the total allowed (max_attempts). riverbpmn maps
// one onto the other without new columns:
//
//   - at insert, the engine's middleware resolves the job's cycle
//     (ResolveCycle: job definition > job context > Config.DefaultCycle >
//     none), records it in the job's metadata and sets MaxAttempts to the
//     cycle's number of executions (MaxAttempts);
//   - after a failure River asks its ClientRetryPolicy when to retry; the
//     engine's policy answers with NextRetry, from the recorded cycle with
//     Camunda's interval-index rule, where the executions left before the
//     failure are max_attempts - attempt + 1 (ExecutionsLeft);
//   - a conflict failure (ErrConflict, Postgres 40001 or 40P01) is turned
//     into a River snooze by the work middleware (SnoozeConflicts): River
//     then gives the execution back (attempt - 1) and the job waits the
//     interval;
//   - when River discards the job, a trigger of migration riverbpmn/004 opens
//     a failedJob incident in the same transaction; SetJobRetries revives it.

// MaxAttemptsUnbounded is the max_attempts of a job whose retry cycle is
// unbounded (R/<duration>): the largest value River's smallint column holds
// (the same as job.MaxAttemptsUnbounded). Such a job is never discarded for
// running out of executions: when one of its failures happens at attempt
// 1000 or later, the trigger river_bpmn_job_renew_unbounded (migration
// riverbpmn/004) rewinds its attempt to 0 and keeps only its last 20 errors,
// in the same UPDATE that River uses to schedule the retry. Its attempt
// therefore counts the executions since the last renewal, and its errors
// never grow without bound (River appends one per failure, and an R/PT1S job
// fails 86,400 times a day).
const MaxAttemptsUnbounded = math.MaxInt16

// The renewal thresholds of unbounded jobs; the trigger of migration
// riverbpmn/004 has the same numbers.
const (
	unboundedRenewAtAttempt = 1000
	unboundedKeptErrors     = 20
)

// CycleMetadataKey is the metadata key under which the engine's insert
// middleware records the retry cycle of a plain River job (one without a
// job context) when Config.DefaultCycle is set (ApplyDefaultCycle). The job
// stays a plain job (it has no "bpmn" key): it gets the cycle's executions
// and waits, but no incident when it is discarded. Jobs with a job context
// keep their cycle in the context (its retry_cycle field) instead.
const CycleMetadataKey = "bpmn_retry_cycle"

// MaxAttempts returns River's MaxAttempts for a job with cycle: its number
// of executions, or MaxAttemptsUnbounded.
func MaxAttempts(cycle Cycle) int {
	n, unbounded := cycle.Executions()
	if unbounded {
		return MaxAttemptsUnbounded
	}
	return n
}

// MaxAttemptsProblem says why a parsed cycle cannot be a River job's retry
// cycle (it allows more executions than River's max_attempts holds), or ""
// when it can.
func MaxAttemptsProblem(cycle Cycle) string {
	if n, unbounded := cycle.Executions(); !unbounded && n > MaxAttemptsUnbounded {
		return fmt.Sprintf("allows %d executions, more than River's max_attempts holds (%d); use R/<duration> for unbounded retries", n, MaxAttemptsUnbounded)
	}
	return ""
}

// ExecutionsLeft returns Camunda's retries of a running (or just failed)
// job: the executions left counting the one under way, at least 1.
func ExecutionsLeft(job *rivertype.JobRow) int {
	return max(job.MaxAttempts-job.Attempt+1, 1)
}

// ContextCycleFunc reads the retry cycle of the job context stored in a
// job's metadata: value is the raw JSON of the context's retry_cycle field
// (nil when the context has none) and found whether the metadata holds a
// job context at all. err reports a context that cannot be read. The engine
// supplies it: the job context's format is the engine's.
type ContextCycleFunc func(metadata []byte) (value json.RawMessage, found bool, err error)

// CycleOf returns the retry cycle recorded on job at insert, and false when
// it has none (a plain River job) or it cannot be read. A job context
// without a cycle gives the zero Cycle (3 executions, no wait) and true.
// contextCycle reads the job context's cycle; nil reads plain jobs only
// (CycleMetadataKey).
func CycleOf(job *rivertype.JobRow, contextCycle ContextCycleFunc) (Cycle, bool) {
	if contextCycle != nil {
		value, found, err := contextCycle(job.Metadata)
		if err != nil {
			return Cycle{}, false
		}
		if found {
			// Only the cycle is read: bad data elsewhere in the context does
			// not change how the job is retried.
			var retryCycle string
			if value != nil {
				if err := json.Unmarshal(value, &retryCycle); err != nil {
					return Cycle{}, false
				}
			}
			if retryCycle == "" {
				return Cycle{}, true
			}
			cycle, err := ParseCycle(retryCycle)
			return cycle, err == nil
		}
	}

	if !bytes.Contains(job.Metadata, []byte(`"`+CycleMetadataKey+`"`)) {
		return Cycle{}, false // fast path: a plain River job
	}
	var plain struct {
		RetryCycle *string `json:"bpmn_retry_cycle"`
	}
	if err := json.Unmarshal(job.Metadata, &plain); err != nil || plain.RetryCycle == nil {
		return Cycle{}, false
	}
	cycle, err := ParseCycle(*plain.RetryCycle)
	if err != nil || cycle.IsZero() {
		return Cycle{}, false
	}
	return cycle, true
}

var defaultFallbackRetryPolicy = &river.DefaultClientRetryPolicy{}

// NextRetry returns when a failed job runs again, as the engine's
// river.ClientRetryPolicy answers River.
//
// For a job whose cycle was recorded at insert (CycleOf: a job with a job
// context, or a plain job inserted while Config.DefaultCycle was set), the
// next execution is at failure time + the cycle's interval, chosen by
// Camunda's rule (Cycle.NextRetryAt): with N intervals and L executions left
// before this failure (ExecutionsLeft), the index is N - (L - 1), clamped to
// [0, N-1]. Rn/d and R/d always wait d; a job context without a cycle is
// retried at once. Calendar fields (years, months, days) are added in UTC.
// Whether the job is retried at all is River's decision: it discards the job
// when attempt reaches max_attempts, which the insert middleware set from the
// cycle (MaxAttempts).
//
// Every other job is left to fallback (nil: River's
// DefaultClientRetryPolicy): plain River jobs keep River's own behaviour. So
// is a job whose recorded cycle cannot be read (metadata edited by hand: a
// retry_cycle that does not parse or is not a string, or a job context that
// contextCycle cannot read): it gets River's default exponential backoff
// rather than an error, and its max_attempts is left as stored.
//
// It needs nothing but the job row, so clients in other processes apply
// exactly the cycle each job was given.
func NextRetry(job *rivertype.JobRow, contextCycle ContextCycleFunc, fallback river.ClientRetryPolicy) time.Time {
	cycle, ok := CycleOf(job, contextCycle)
	if !ok {
		if fallback != nil {
			return fallback.NextRetry(job)
		}
		return defaultFallbackRetryPolicy.NextRetry(job)
	}
	return cycle.NextRetryAt(time.Now().UTC(), ExecutionsLeft(job))
}

// ResolveCycle picks the cycle of a job with a job context, by Camunda's
// precedence: its job definition's (definition), else the one its job
// context gives (given), else the engine's default (engineDefault), else
// none (the zero Cycle: 3 executions). A given cycle is validated even when
// the job definition's wins, so that a typo never passes silently: problem
// says why it cannot be used ("" when it can), and the cycle is then the
// zero Cycle. The job's MaxAttempts is MaxAttempts of the result, whatever
// the insert options said: for a BPMN job the cycle decides.
func ResolveCycle(definition Cycle, given string, engineDefault Cycle) (cycle Cycle, problem string) {
	var givenCycle Cycle
	if given != "" {
		var err error
		if givenCycle, err = ParseCycle(given); err != nil {
			return Cycle{}, "is not a valid retry time cycle: " + err.Error()
		}
		if problem := MaxAttemptsProblem(givenCycle); problem != "" {
			return Cycle{}, problem
		}
	}
	cycle = definition
	if cycle.IsZero() {
		cycle = givenCycle
	}
	if cycle.IsZero() {
		cycle = engineDefault
	}
	return cycle, ""
}

// ApplyDefaultCycle gives a plain River job about to be inserted the
// engine's default cycle (engineDefault), if there is one and the job's
// MaxAttempts is River's default (river.MaxAttemptsDefault): MaxAttempts
// from the cycle and the cycle recorded under CycleMetadataKey. A
// MaxAttempts chosen by the job's InsertOpts, its args' InsertOpts or the
// client's river.Config.MaxAttempts is kept, with River's retries, as asked.
// A job without the cycle keeps River's behaviour, and a CycleMetadataKey it
// carries (copied from another job's metadata) is removed so that it cannot
// disagree with MaxAttempts. Metadata that is not a JSON object is left
// alone (River's behaviour). Without a default cycle and without the key,
// params is not changed at all.
func ApplyDefaultCycle(params *rivertype.JobInsertParams, engineDefault Cycle) error {
	withCycle := !engineDefault.IsZero() && params.MaxAttempts == river.MaxAttemptsDefault
	if !withCycle && !bytes.Contains(params.Metadata, []byte(`"`+CycleMetadataKey+`"`)) {
		return nil // stock River: not a byte changed
	}
	fields := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params.Metadata)) > 0 {
		if err := json.Unmarshal(params.Metadata, &fields); err != nil || fields == nil {
			return nil // not an object: no room for the cycle, River's behaviour
		}
	}
	if !withCycle {
		if _, ok := fields[CycleMetadataKey]; !ok {
			return nil
		}
		delete(fields, CycleMetadataKey)
	} else {
		encoded, err := json.Marshal(engineDefault.String())
		if err != nil {
			return err
		}
		fields[CycleMetadataKey] = encoded
		params.MaxAttempts = MaxAttempts(engineDefault)
	}
	metadata, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	params.Metadata = metadata
	return nil
}
