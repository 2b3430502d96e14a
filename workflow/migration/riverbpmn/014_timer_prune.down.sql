DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_timer_ended;
