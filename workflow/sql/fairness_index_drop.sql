-- Engine.DisableTenantFairness: drop the tenant indexes of
-- fairness_index_create.sql (one statement each, outside a transaction).
DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_p;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant;
