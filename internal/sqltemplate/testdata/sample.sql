SELECT id FROM /* TEMPLATE: schema */river_job;
