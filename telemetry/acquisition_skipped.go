package telemetry

import (
	"context"
)

// NameKeysHeldSkipped is the counter of candidate jobs that fetches passed
// over because their exclusive key was held (Camunda's "locked exclusive"
// metric), by queue and acquisition order.
const NameKeysHeldSkipped = "riverbpmn.acquisition.keys_held_skipped"

// keysHeldSkippedDescription describes NameKeysHeldSkipped's counter.
const keysHeldSkippedDescription = "Candidate jobs that fetches passed over because a running job held their exclusive key."

// KeysHeldSkippedEnabled reports whether the counter of candidates passed
// over because their key was held records anything: only then does the
// engine render the count into its fetch statement (which it renders once
// per client, at its first fetch), so that the fetch costs nothing more
// without a meter provider.
func (t *Instruments) KeysHeldSkippedEnabled(ctx context.Context) bool {
	return t != nil && t.keysHeldSkipped != nil && t.keysHeldSkipped.Enabled(ctx)
}

// KeysHeldSkipped counts n candidates that one fetch of queue, by a client
// acquiring in order, passed over because their exclusive key was held.
// Called after every fetch whose statement counts them, n zero or not.
func (t *Instruments) KeysHeldSkipped(ctx context.Context, queue, order string, n int64) {
	if t == nil || t.keysHeldSkipped == nil || n <= 0 {
		return
	}
	t.keysHeldSkipped.Add(ctx, n, seriesOf(t, queue, "", &Class{}, false, AttrOrder, order).add...)
}
