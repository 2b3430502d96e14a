-- Job exists (List of a job that has no incidents): whether job $1 exists.
SELECT EXISTS (
    SELECT 1 FROM /* TEMPLATE: schema */river_job WHERE id = $1::bigint
);
