-- riverbpmn migration line "riverbpmn", version 15: the seven fetch-order
-- indexes of migration 003 are no longer kept for every database. Each took
-- an index entry (and an evaluation of the priority or timer expression) at
-- every insert of an available job, plain River jobs included, whether or
-- not any client fetched in its order. A client whose Acquisition orders by
-- priority, timers first or due date now creates its order's index when it
-- starts (CREATE INDEX CONCURRENTLY, sql/fetch_index_create.sql); an
-- operator can create them beforehand with `riverbpmn fetch-index-enable`.
--
-- Upgrading while clients of an older version fetch by one of these orders:
-- their fetches stay correct but read the queue without the index (a sort of
-- the queue's available jobs) until a client of this version starts, or
-- until `riverbpmn fetch-index-enable --by-priority ...` is run. Run it
-- before this migration to avoid the gap.
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_p;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_t;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_d;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pt;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_pd;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_td;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_fetch_ptd;
