-- Engine.DisableTenantFairness: drop the tenant indexes of
-- fairness_index_create.sql, every order's (one statement each, outside a
-- transaction; Engine.EnableTenantFairness also runs the one of an index it
-- finds invalid, left by an interrupted build).
DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_p;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_t;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_d;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pt;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_pd;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_td;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_ptd;
