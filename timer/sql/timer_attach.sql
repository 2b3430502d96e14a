-- The first occurrence's job, inserted through River after the timer row.
UPDATE /* TEMPLATE: schema */river_bpmn_timer
SET job_id = $2,
    open_job_ids = ARRAY[$2::bigint],
    process_instance_id = nullif($3, ''),
    activity_id = nullif($4, ''),
    job_definition_id = nullif($5, ''),
    queue = $6
WHERE id = $1;
