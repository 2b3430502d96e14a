-- The tenant indexes of fair fetching (workflow/sql/fairness_index_create.sql)
-- are created at run time, not by a migration; some read the functions
-- below, so they go first.
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_t;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_d;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pt;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_td;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_ptd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_t;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_d;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pt;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_td;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_ptd;
DROP STATISTICS IF EXISTS /* TEMPLATE: schema */river_bpmn_job_priority;
DROP STATISTICS IF EXISTS /* TEMPLATE: schema */river_bpmn_job_deployment;
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_priority(jsonb);
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_is_timer(jsonb);
DROP FUNCTION IF EXISTS /* TEMPLATE: schema */river_bpmn_deployment(jsonb);
