SELECT open_job_ids FROM /* TEMPLATE: schema */river_bpmn_timer WHERE id = $1;
