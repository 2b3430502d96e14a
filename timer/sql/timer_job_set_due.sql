-- A waiting occurrence gets its new due date; available and scheduled swap
-- according to it: available when due before $3 (now plus the near-due
-- horizon, timer.NearDue: River's fetch takes it once scheduled_at has
-- passed), scheduled otherwise.
UPDATE /* TEMPLATE: schema */river_job
SET scheduled_at = $2::timestamptz,
    state = CASE
        WHEN state IN ('available', 'scheduled') AND $2::timestamptz <= $3::timestamptz THEN 'available'
        WHEN state IN ('available', 'scheduled') THEN 'scheduled'
        ELSE state
    END::/* TEMPLATE: schema */river_job_state
WHERE id = $1;
