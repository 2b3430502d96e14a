-- SuspensionScheduleDone: record that change $1 was applied by client $2
-- ($3 jobs changed), or ($4 not NULL) that applying it failed with $4; a
-- failed change stays due and is tried again.
UPDATE /* TEMPLATE: schema */river_bpmn_suspension_schedule
SET
    applied_at = CASE WHEN $4::text IS NULL THEN now() END,
    applied_by = $2::text,
    jobs = $3::bigint,
    last_error = $4::text
WHERE id = $1::bigint;
