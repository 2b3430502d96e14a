package workflow

// Follow-up jobs: a job inserted by a running job starts at once, never
// after a poll wait.
//
// River wakes a queue's producers with an insert notification, but its
// client sends at most one per queue per FetchCooldown: the notification of
// an insert made within FetchCooldown of the previous one is dropped, and
// when the fetch that the previous one triggered has already read the table,
// the job waits for FetchPollInterval. Camunda's job executor is hinted of
// every job a running job creates.
//
// riverbpmn marks each run's context (workFollowUps, one context value per
// run, nothing else), and:
//
//   - an insert that the pilot sees (Insert, InsertTx, InsertMany,
//     InsertManyTx) made with a running job's context sends River's insert
//     notification for the queues of its available jobs in the insert's own
//     transaction (pilot.JobInsertMany): PostgreSQL delivers it when the
//     insert commits, so the producers fetch once the job is visible. Its
//     payload is River's, byte for byte, so that when River's client sends
//     its own in the same transaction PostgreSQL delivers one;
//   - InsertManyFast and InsertManyFastTx, which River writes without the
//     pilot, record their queues, and the run wakes them when its work
//     returns (its inserts are committed by then).
//
// An insert made outside a running job, or with another context than the
// job's, is River's alone.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/exclusive"
)

// riverInsertTopic is the topic of River's insert notification (river
// v0.51.1 notifier.NotificationTopicInsert), which its producers listen to.
const riverInsertTopic = "river_insert"

// riverInsertPayload is River's insert notification payload for queue, as
// River's client writes it (client.go maybeNotifyInsertForQueues).
func riverInsertPayload(queue string) string { return fmt.Sprintf("{\"queue\": %q}", queue) }

// followUps is a running job's context: it says that inserts made with it
// are made by a running job, and collects the queues of its fast inserts.
type followUps struct {
	context.Context

	// notified counts the inserts whose notification the pilot sent in
	// their transaction.
	notified atomic.Int64

	mu         sync.Mutex
	fastQueues []string
}

type followUpsKey struct{}

// Value makes f its own context value, so that marking a run costs one
// allocation.
func (f *followUps) Value(key any) any {
	if key == (followUpsKey{}) {
		return f
	}
	return f.Context.Value(key)
}

// followUpsOf returns the running job's followUps of ctx, or nil when ctx is
// not a running job's.
func followUpsOf(ctx context.Context) *followUps {
	f, _ := ctx.Value(followUpsKey{}).(*followUps)
	return f
}

// workFollowUps runs a job's work with its context marked, and wakes the
// queues of the fast inserts it made when it returns.
func (e *Engine) workFollowUps(ctx context.Context, doInner func(context.Context) error) error {
	f := &followUps{Context: ctx}
	err := doInner(f)
	f.mu.Lock()
	queues := f.fastQueues
	f.mu.Unlock()
	if len(queues) > 0 && e.dbPool != nil {
		schema := e.workSchema(ctx)
		for _, queue := range queues {
			if wakeErr := exclusive.WakeQueue(context.WithoutCancel(ctx), e.dbPool, schema, queue); wakeErr != nil {
				e.logger().WarnContext(ctx, "riverbpmn: waking producers for jobs inserted by a running job",
					slog.String("queue", queue), slog.String("err", wakeErr.Error()))
			}
		}
	}
	return err
}

// insertFollowUps runs an insert (doInner) of manyParams; made with a running
// job's context by a call that the pilot does not see (the fast inserts), it
// records the queues of its available jobs for workFollowUps.
func insertFollowUps(ctx context.Context, manyParams []*rivertype.JobInsertParams, doInner func() ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	f := followUpsOf(ctx)
	if f == nil {
		return doInner()
	}
	notified := f.notified.Load()
	results, err := doInner()
	if err != nil || f.notified.Load() != notified {
		return results, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, params := range manyParams {
		if params.State == rivertype.JobStateAvailable && !slices.Contains(f.fastQueues, params.Queue) {
			f.fastQueues = append(f.fastQueues, params.Queue)
		}
	}
	return results, nil
}

// notifyFollowUps sends, in the insert's transaction, River's insert
// notification for the queues of the available jobs of an insert made with a
// running job's context.
func notifyFollowUps(ctx context.Context, execTx riverdriver.ExecutorTx, params *riverdriver.JobInsertFastManyParams) error {
	f := followUpsOf(ctx)
	if f == nil {
		return nil
	}
	var payloads []string
	for _, job := range params.Jobs {
		if job.State != rivertype.JobStateAvailable {
			continue
		}
		if payload := riverInsertPayload(job.Queue); !slices.Contains(payloads, payload) {
			payloads = append(payloads, payload)
		}
	}
	if len(payloads) == 0 {
		return nil
	}
	if err := execTx.NotifyMany(ctx, &riverdriver.NotifyManyParams{Payload: payloads, Schema: params.Schema, Topic: riverInsertTopic}); err != nil {
		return fmt.Errorf("workflow: notifying the producers of jobs inserted by a running job: %w", err)
	}
	f.notified.Add(1)
	return nil
}
