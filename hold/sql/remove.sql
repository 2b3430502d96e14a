-- HoldRemove: remove reason $2 from jobs $1, releasing those whose last
-- reason it was (function of migration riverbpmn/007). Returns each job that
-- had the reason and whether it was released.
SELECT job_id, released
FROM /* TEMPLATE: schema */river_bpmn_hold_remove($1::bigint[], $2::text);
