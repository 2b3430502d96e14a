SELECT type, definition, anchor, repeat_offset_us, occurrence, job_id, ended_at IS NOT NULL, end_reason
FROM /* TEMPLATE: schema */river_bpmn_timer
WHERE id = $1
FOR UPDATE;
