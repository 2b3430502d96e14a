-- Throughput: jobs completed and discarded per bucket of $2 since $1, by
-- finalized_at (River's river_job_state_and_finalized_at_index: a range
-- per state).
SELECT
    date_bin($2::interval, finalized_at, $1::timestamptz) AS bucket,
    state::text,
    count(*)
FROM /* TEMPLATE: schema */river_job
WHERE state IN ('completed', 'discarded')
    AND finalized_at >= $1::timestamptz
GROUP BY 1, 2;
