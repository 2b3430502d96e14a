-- A waiting occurrence gets its new due date; available and scheduled swap
-- according to it, as River's own states mean.
UPDATE /* TEMPLATE: schema */river_job
SET scheduled_at = $2::timestamptz,
    state = CASE
        WHEN state IN ('available', 'scheduled') AND $2::timestamptz <= $3::timestamptz THEN 'available'
        WHEN state IN ('available', 'scheduled') THEN 'scheduled'
        ELSE state
    END::/* TEMPLATE: schema */river_job_state
WHERE id = $1;
