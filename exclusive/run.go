package exclusive

// Runs (KeeperConfig.Batch, workflow.Config.Exclusive.Batch). A fetch with
// batching takes, with the head of a key, the key's next waiting jobs, all
// moved to running in the statement that takes the key (sql/fetch_step.sql,
// "batch"). The client then runs them one after another, in the fetch's
// order: each job of the run waits in the work middleware, before its work
// starts, until every earlier job of its run has ended; the key is given
// back once, after the last job of the run has ended. The invariant (a lock
// names every job of its run, and holds while any of them runs its attempt)
// is in doc.go.
//
// River applies a job's timeout inside the middleware chain, around the
// worker's Work alone (river v0.51.1, internal/jobexecutor/job_executor.go,
// JobExecutor.execute: doInner sets context.WithTimeout(ctx,
// cmp.Or(WorkUnit.Timeout(), ClientJobTimeout)) just before WorkUnit.Work,
// and execution.MiddlewareChain wraps doInner in the middleware), so the
// wait for a job's turn does not eat its timeout.

import (
	"context"
	"errors"
	"sync"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// run is one run of a key taken by a fetch of the engine's clients: its
// jobs in run order, which have ended, and the key to give back after the
// last.
type run struct {
	held Held

	mu     sync.Mutex
	ended  []bool
	turns  []chan struct{} // turns[i] is closed once every job before i has ended
	opened int             // how many turns are closed (a prefix)
	left   int             // jobs not yet ended
}

// runMember is a job attempt of a run, and its place in it.
type runMember struct {
	run *run
	pos int
}

func newRun(held Held, n int) *run {
	r := &run{held: held, ended: make([]bool, n), turns: make([]chan struct{}, n), left: n}
	for i := range r.turns {
		r.turns[i] = make(chan struct{})
	}
	close(r.turns[0])
	r.opened = 1
	return r
}

// end marks the job at pos ended (again: no effect) and opens the turns of
// the jobs whose predecessors have all ended. It reports whether this ended
// the run: the caller then gives the key back.
func (r *run) end(pos int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended[pos] {
		return false
	}
	r.ended[pos] = true
	r.left--
	// Job k may start once jobs 0..k-1 have ended.
	for r.opened < len(r.turns) && r.ended[r.opened-1] {
		close(r.turns[r.opened])
		r.opened++
	}
	return r.left == 0
}

// holdRun records the jobs of a run a fetch took (job is the one at pos of
// a run of n jobs, by key and token): the first job of a run seen creates
// it.
func (k *Keeper) holdRun(schema string, job *rivertype.JobRow, key string, token int64, pos, n int) {
	r := loadOrNew(&k.runsByToken, runKeyID{schema: schema, token: token}, func() *run {
		return newRun(Held{Key: key, Token: token, Schema: schema, Queue: job.Queue, JobID: job.ID}, n)
	})
	k.runJobs.Add(1)
	k.runMembers.Store(attemptOf(job), runMember{run: r, pos: pos})
}

// runKeyID names a run by its acquisition's token.
type runKeyID struct {
	schema string
	token  int64
}

// runMemberOf returns the run job's attempt belongs to, if any.
func (k *Keeper) runMemberOf(job *rivertype.JobRow) (runMember, bool) {
	value, ok := k.runMembers.Load(attemptOf(job))
	if !ok {
		return runMember{}, false
	}
	return value.(runMember), true //nolint:forcetypeassert // only members are stored
}

// endRunJob ends job (a member m of a run) and, when that ends the run,
// returns the key to give back, naming job: the run's last job to end,
// whose outcome River writes last (ended.go).
func (k *Keeper) endRunJob(job *rivertype.JobRow, m runMember) (Held, bool) {
	if _, ok := k.runMembers.LoadAndDelete(attemptOf(job)); !ok {
		return Held{}, false // ended already
	}
	if !m.run.end(m.pos) {
		return Held{}, false
	}
	k.runsByToken.Delete(runKeyID{schema: m.run.held.Schema, token: m.run.held.Token})
	held := m.run.held
	held.JobID = job.ID
	return held, true
}

// workRunJob runs a job of a run: it waits until every earlier job of its
// run has ended, then works it; a job whose context ends while it waits
// (River's JobCancel or riverbpmn's StopJob, the client stopping, a liveness
// fence) ends without running its work: cancelled when asked to stop,
// otherwise snoozed for no time, which gives its attempt back (it never
// ran). The last job of the run to end gives the key back.
func (k *Keeper) workRunJob(ctx context.Context, job *rivertype.JobRow, m runMember, doInner func(context.Context) error) error {
	defer func() {
		if held, ok := k.endRunJob(job, m); ok {
			k.Release(context.WithoutCancel(ctx), held)
		}
	}()
	select {
	case <-m.run.turns[m.pos]:
	case <-ctx.Done():
		return errRunWaitEnded(ctx)
	}
	if ctx.Err() != nil {
		// Its turn came as it was cancelled: it does not start either.
		return errRunWaitEnded(ctx)
	}
	return doInner(ctx)
}

// errRunWaitEnded is what a job of a run returns when its context ended
// while it waited for its turn.
func errRunWaitEnded(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, rivertype.ErrJobCancelledRemotely) {
		return river.JobCancel(cause)
	}
	return river.JobSnooze(0)
}
