-- LifecycleQueue: queue jobs $1 (function of migration riverbpmn/011).
SELECT job_id, outcome, state
FROM /* TEMPLATE: schema */river_bpmn_queue($1::bigint[]);
