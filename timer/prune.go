package timer

import (
	"context"
	"fmt"
	"time"
)

// PruneBatchSize is how many timers one statement of Prune deletes.
const PruneBatchSize = 1000

// Prune deletes the timers that ended before endedBefore and whose
// occurrence jobs have all finished (or are gone), in statements of
// PruneBatchSize, and returns how many it deleted. An ended timer whose
// last occurrence is still running or retrying is kept until it finishes;
// a firing of a pruned timer creates nothing (Fire). Listings of a process
// instance's timers no longer show the pruned ones.
func (s *Store) Prune(ctx context.Context, db Executor, endedBefore time.Time) (int64, error) {
	var total int64
	for {
		tag, err := db.Exec(ctx, s.sql("timer_prune.sql"), endedBefore, PruneBatchSize)
		if err != nil {
			return total, fmt.Errorf("timer: pruning timers ended before %s: %w", endedBefore.UTC().Format(time.RFC3339), err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < PruneBatchSize {
			return total, nil
		}
	}
}
