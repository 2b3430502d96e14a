-- LifecycleDependents: how many jobs wait for job $1, and how many of those
-- it has not released yet.
SELECT count(*), count(*) FILTER (WHERE done_at IS NULL)
FROM /* TEMPLATE: schema */river_bpmn_dependency
WHERE prerequisite_id = $1::bigint;
