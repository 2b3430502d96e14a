-- HoldAdd: hold jobs $1 for reason $2 (function of migration riverbpmn/007).
-- Returns the jobs that did not have the reason yet.
SELECT job_id
FROM /* TEMPLATE: schema */river_bpmn_hold_add($1::bigint[], $2::text) AS job_id;
