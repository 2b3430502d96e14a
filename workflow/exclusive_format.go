package workflow

import (
	"fmt"
	"strings"
	"time"
)

// String describes the lock in one line, as printed with %v and %+v (also
// inside an ExclusiveWait or a slice of locks), for logs and the CLI.
func (l ExclusiveLock) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "key %q held by job %d attempt %d (client %s, queue %s, since %s)",
		l.Key, l.JobID, l.Attempt, l.ClientID, l.Queue, l.LockedAt.UTC().Format(time.RFC3339Nano))
	switch {
	case l.HolderState == "":
		b.WriteString(", stale: the job no longer exists")
	case l.Stale:
		fmt.Fprintf(&b, ", stale: the job is now %s at attempt %d", l.HolderState, l.HolderAttempt)
	}
	return b.String()
}

// String describes the wait in one line, as printed with %v and %+v.
func (w ExclusiveWait) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %d (%s, queue %s)", w.JobID, w.State, w.Queue)
	switch {
	case w.Key == "" && !w.Scope.Enabled():
		b.WriteString(": exclusivity is not enforced on this schema (exclusive scope none), never held back")
		return b.String()
	case w.Key == "":
		b.WriteString(": no exclusive key (not exclusive, or of no process instance), never held back")
		return b.String()
	}
	fmt.Fprintf(&b, ": key %q", w.Key)
	switch {
	case w.Waiting:
		fmt.Fprintf(&b, ", waiting for %s", w.Holder)
	case w.Holder != nil && w.Holder.JobID == w.JobID && !w.Holder.Stale:
		b.WriteString(", held by this job")
	case w.Holder != nil:
		fmt.Fprintf(&b, ", not waiting (%s)", w.Holder)
	default:
		b.WriteString(", free")
	}
	if w.KeyJobsAhead > 0 {
		fmt.Fprintf(&b, "; %d job(s) of the key ahead", w.KeyJobsAhead)
	}
	return b.String()
}
