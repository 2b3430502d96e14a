-- WaitingOnKey: the available exclusive jobs per process definition and
-- job definition whose exclusive key another job holds
-- (river_bpmn_exclusive_lock, migration 005): the key is the job's process
-- instance, or its root with the root-process-instance scope ($1). A job
-- whose context does not say exclusive false is exclusive (the default); a
-- stale lock (its holder no longer runs) counts until the next fetch takes
-- it over.
SELECT
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata), '') AS process_definition,
    coalesce(/* TEMPLATE: schema */river_bpmn_ctx_job_definition(j.metadata), '') AS job_definition,
    count(*)
FROM /* TEMPLATE: schema */river_job j
JOIN /* TEMPLATE: schema */river_bpmn_exclusive_lock l
    ON l.key = CASE WHEN $1::boolean
        THEN coalesce(/* TEMPLATE: schema */river_bpmn_ctx_root(j.metadata), /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata))
        ELSE /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata) END
    AND l.job_id IS NOT NULL
    AND l.job_id <> j.id
WHERE j.state = 'available'
    AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(j.metadata) IS NOT FALSE
GROUP BY 1, 2;
