-- List: the timers the filter keeps, by id, after timer id $1 (0 for the
-- first page), at most $8 (the page and one more, which says whether a
-- further page exists). Every filter is optional: '' (or NULL, false) keeps
-- all. $10 keeps the timers of one process instance (served by the
-- timer's index on process_instance_id); $4 only timer start events (no
-- process instance); $5 and $6 timers whose waiting occurrence is due in
-- [$5, $6); $7 keeps ended timers too; $9 timers whose latest occurrence
-- job belongs to that process definition (ended timers whose job is gone
-- have none).
SELECT t.id, t.type, t.definition, t.occurrence, t.job_id, j.state::text, j.scheduled_at,
    t.repetitions_left, t.repeat_offset_us, t.anchor, t.ended_at, t.end_reason,
    coalesce(t.process_instance_id, ''), coalesce(t.activity_id, ''), coalesce(t.job_definition_id, ''),
    t.kind, t.queue, t.created_at
FROM /* TEMPLATE: schema */river_bpmn_timer t
LEFT JOIN /* TEMPLATE: schema */river_job j ON j.id = t.job_id
WHERE t.id > $1
    AND ($2::text = '' OR t.job_definition_id = $2::text)
    AND ($3::text = '' OR t.activity_id = $3::text)
    AND (NOT $4::boolean OR t.process_instance_id IS NULL)
    AND ($5::timestamptz IS NULL OR (t.ended_at IS NULL AND j.scheduled_at >= $5::timestamptz))
    AND ($6::timestamptz IS NULL OR (t.ended_at IS NULL AND j.scheduled_at < $6::timestamptz))
    AND ($7::boolean OR t.ended_at IS NULL)
    AND ($9::text = '' OR /* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata) = $9::text)
    AND ($10::text = '' OR t.process_instance_id = $10::text)
ORDER BY t.id
LIMIT $8
