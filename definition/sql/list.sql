-- List: one page of the stored job definitions, by id, after id $1
-- (keyset; '' for the first page), at most $2, with their run-time
-- state: its overriding priority, how many of its jobs are unfinished (found
-- by containment over River's GIN index on metadata, river_bpmn_ctx_has
-- of migration riverbpmn/016) and how many open
-- incidents it has (served by river_bpmn_incident_open, migration
-- riverbpmn/004), and when it was suspended (NULL when it is active).
-- Ids compare bytewise (COLLATE "C"), as Go compares the declared ids List
-- merges in, whatever the database's collation.
SELECT
    d.id, d.process_definition_key, d.activity_id, d.kind, d.overriding_priority,
    (
        SELECT count(*)
        FROM /* TEMPLATE: schema */river_job j
        WHERE /* TEMPLATE: schema */river_bpmn_ctx_has_job_definition(j.metadata, d.id)
            AND j.state IN ('available', 'scheduled', 'retryable', 'pending', 'running')
    ) AS unfinished_jobs,
    (
        SELECT count(*)
        FROM /* TEMPLATE: schema */river_bpmn_incident i
        WHERE i.resolved_at IS NULL
            AND i.job_definition_id = d.id
    ) AS open_incidents,
    s.suspended_at
FROM
    /* TEMPLATE: schema */river_bpmn_job_definition d
    LEFT JOIN /* TEMPLATE: schema */river_bpmn_suspension s
        ON s.target_type = 'job_definition' AND s.target_id = d.id
WHERE
    d.id COLLATE "C" > $1::text
ORDER BY
    d.id COLLATE "C" ASC
LIMIT $2::integer;
