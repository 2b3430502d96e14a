-- The key expression of scope exclusive.RootProcessInstance for the river_job
-- row named river_job: the root of its process instance's call hierarchy (the
-- instance itself when no root is recorded). Exactly the expression of index
-- river_bpmn_job_exclusive_root (migration riverbpmn/016), so that conditions
-- on it use the index. Must agree with exclusive.Key.
coalesce(
    nullif(/* TEMPLATE: schema */river_bpmn_ctx_root(river_job.metadata), ''),
    nullif(/* TEMPLATE: schema */river_bpmn_ctx_instance(river_job.metadata), '')
)
