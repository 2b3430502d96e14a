-- riverbpmn migration line "riverbpmn", version 24, down.
DROP TABLE /* TEMPLATE: schema */river_bpmn_bulk_operation;
