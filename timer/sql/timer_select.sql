SELECT t.id, t.type, t.definition, t.occurrence, t.job_id, j.state::text, j.scheduled_at,
    t.repetitions_left, t.repeat_offset_us, t.anchor, t.ended_at, t.end_reason,
    coalesce(t.process_instance_id, ''), coalesce(t.activity_id, ''), coalesce(t.job_definition_id, ''),
    t.kind, t.queue, t.created_at
FROM /* TEMPLATE: schema */river_bpmn_timer t
LEFT JOIN /* TEMPLATE: schema */river_job j ON j.id = t.job_id
