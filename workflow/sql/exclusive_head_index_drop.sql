-- Engine.DisableFetchOrderIndexes: drop the exclusive head-of-key indexes
-- of exclusive_head_index_create.sql (one statement each, outside a
-- transaction; Engine.EnableExclusiveHeadIndexes also runs the one of an
-- index it finds invalid, left by an interrupted build).
DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_t;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_d;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_pt;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_pd;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_td;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_instance_ptd;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_t;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_d;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_pt;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_pd;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_td;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_root_ptd;
