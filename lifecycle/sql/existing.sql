-- LifecycleExisting: which of jobs $1 exist.
SELECT id FROM /* TEMPLATE: schema */river_job WHERE id = ANY($1::bigint[]);
