DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_tenant;
