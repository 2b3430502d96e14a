UPDATE /* TEMPLATE: schema */river_bpmn_timer
SET occurrence = $2,
    job_id = $3,
    repetitions_left = $4,
    open_job_ids = ARRAY(
        SELECT j.id FROM /* TEMPLATE: schema */river_job j
        WHERE j.id = ANY(open_job_ids) AND j.id <> $3
            AND j.state NOT IN ('completed', 'cancelled', 'discarded')
        ORDER BY j.id
    ) || $3::bigint
WHERE id = $1;
