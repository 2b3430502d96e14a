UPDATE /* TEMPLATE: schema */river_bpmn_timer
SET ended_at = $2,
    end_reason = $3,
    repetitions_left = CASE WHEN $3 = 'cancelled' THEN repetitions_left ELSE 0 END,
    open_job_ids = ARRAY(
        SELECT j.id FROM /* TEMPLATE: schema */river_job j
        WHERE j.id = ANY(open_job_ids) AND j.state NOT IN ('completed', 'cancelled', 'discarded')
        ORDER BY j.id
    )
WHERE id = $1 AND ended_at IS NULL;
