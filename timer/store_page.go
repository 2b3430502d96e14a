package timer

import "context"

// ListPage returns one page of the timers of a process instance, by id: those
// with an id above afterID (0 for the first page), at most limit. Keyset
// paging, so a page costs the same however many timers the instance has.
func (s *Store) ListPage(ctx context.Context, db Executor, processInstanceID string, afterID int64, limit int) ([]*Info, error) {
	rows, err := db.Query(ctx, s.sql("timer_select.sql")+" WHERE t.process_instance_id = $1 AND t.id > $2 ORDER BY t.id LIMIT $3",
		processInstanceID, afterID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Info{}
	for rows.Next() {
		i, err := scanInfo(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}
