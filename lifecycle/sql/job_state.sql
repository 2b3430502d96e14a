-- LifecycleJobState: the state and metadata of job $1.
SELECT state::text, metadata FROM /* TEMPLATE: schema */river_job WHERE id = $1::bigint;
