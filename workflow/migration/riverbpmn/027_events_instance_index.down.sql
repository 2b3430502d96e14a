-- riverbpmn migration line "riverbpmn", version 27, down.
DROP INDEX /* TEMPLATE: schema */river_bpmn_event_instances_idx;
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_event_instances(jsonb[]);
DROP FUNCTION /* TEMPLATE: schema */river_bpmn_event_instance(jsonb);
