-- Engine.DisableFetchOrderIndexes: drop the fetch-order indexes of
-- fetch_index_create.sql (one statement each, outside a transaction;
-- Engine.EnableFetchOrderIndexes also runs the one of an index it finds
-- invalid, left by an interrupted build).
DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_p;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_t;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_d;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pt;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pd;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_td;

DROP INDEX CONCURRENTLY IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_ptd;
