-- SuspensionScheduleInsert: a suspension ($3 true) or activation of target
-- ($1 type, $2 id), with its jobs when $4, due at $5.
INSERT INTO /* TEMPLATE: schema */river_bpmn_suspension_schedule (target_type, target_id, suspend, include_jobs, due_at)
VALUES ($1::text, $2::text, $3::boolean, $4::boolean, $5::timestamptz)
RETURNING id;
