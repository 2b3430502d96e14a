-- Engine.DisableExclusiveRunningIndexes: drop the running-key indexes of
-- exclusive_running_index_create.sql (one statement each, outside a
-- transaction).
DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_running_instance;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_running_root;
