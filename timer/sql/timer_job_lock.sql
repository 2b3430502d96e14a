SELECT state::text, scheduled_at
FROM /* TEMPLATE: schema */river_job
WHERE id = $1
FOR UPDATE;
