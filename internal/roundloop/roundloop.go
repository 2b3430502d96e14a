// Package roundloop runs the rounds of a leader maintenance service: do the
// work that is due, sleep for as long as the round says, again, until the
// service's context ends.
//
// Each service keeps a type of its own and only shares this loop: River keys
// maintenance services by type name, so two services of one shared type
// would replace each other.
package roundloop

import (
	"context"
	"time"
)

// Go starts the loop in a goroutine. started and stopped are the service's
// startstop callbacks (from StartInit); round does one round's work and
// returns how long to wait before the next.
func Go(ctx context.Context, started, stopped func(), round func(context.Context) time.Duration) {
	go func() {
		started()
		defer stopped()
		for {
			timer := time.NewTimer(round(ctx))
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}()
}
