-- LifecyclePrerequisites: the prerequisites of job $1, with their state
-- (NULL when deleted).
SELECT d.prerequisite_id, j.state::text, d.done_at, d.blocked_state
FROM /* TEMPLATE: schema */river_bpmn_dependency AS d
LEFT JOIN /* TEMPLATE: schema */river_job AS j ON j.id = d.prerequisite_id
WHERE d.job_id = $1::bigint
ORDER BY d.prerequisite_id;
