DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_event_pruned;
