-- riverbpmn migration line "riverbpmn", version 23, down: the on-demand
-- head-of-key indexes that use the marker go with it.
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_head_index(jsonb, text) CASCADE;
