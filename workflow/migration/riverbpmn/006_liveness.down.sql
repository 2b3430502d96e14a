DROP TABLE IF EXISTS /* TEMPLATE: schema */river_bpmn_client_session;
