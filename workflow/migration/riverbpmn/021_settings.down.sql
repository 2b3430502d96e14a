DROP TABLE /* TEMPLATE: schema */river_bpmn_setting;
