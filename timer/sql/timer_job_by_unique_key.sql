SELECT id FROM /* TEMPLATE: schema */river_job WHERE unique_key = $1::bytea;
