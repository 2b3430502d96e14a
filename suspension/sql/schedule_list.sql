-- SuspensionScheduleList: changes not yet applied, in due order, after the
-- keyset position ($2 due_at, $3 id; $2 NULL for the first page), at most
-- $1 (a page and one more, which says whether a further page exists).
SELECT id, target_type, target_id, suspend, include_jobs, due_at, last_error
FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule
WHERE applied_at IS NULL
    AND ($2::timestamptz IS NULL OR (due_at, id) > ($2::timestamptz, $3::bigint))
ORDER BY due_at, id
LIMIT $1::integer;
