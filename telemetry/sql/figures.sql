-- Figures: what only the database knows, read by the elected leader at most
-- once per Config.FiguresInterval, as rows (figure, label, value). Each part
-- reads an index or a small table; the comments say what bounds its cost.
--
-- Open incidents by job definition: the partial index of open incidents
-- (riverbpmn/004), so the cost follows the number of open incidents.
SELECT
    'incidents_open' AS figure,
    coalesce(job_definition_id, '') AS label,
    count(*)::float8 AS value
FROM /* TEMPLATE: schema */river_bpmn_incident
WHERE resolved_at IS NULL
GROUP BY 2
UNION ALL
-- The age of the oldest available job of each queue River knows (its
-- river_queue rows): four probes of River's fetch index (state, queue,
-- priority, scheduled_at) per queue, one per River priority; 0 when the
-- queue has no available job.
SELECT
    'oldest_available',
    queue.name,
    coalesce(extract(epoch FROM now() - oldest.at), 0)::float8
FROM /* TEMPLATE: schema */river_queue AS queue
CROSS JOIN LATERAL (
    SELECT min(head.scheduled_at) AS at
    FROM unnest(ARRAY[1, 2, 3, 4]::smallint[]) AS level (priority)
    CROSS JOIN LATERAL (
        SELECT job.scheduled_at
        FROM /* TEMPLATE: schema */river_job AS job
        WHERE job.state = 'available'
            AND job.queue = queue.name
            AND job.priority = level.priority
        ORDER BY job.scheduled_at
        LIMIT 1
    ) AS head
) AS oldest
UNION ALL
-- Dead sessions: clients whose liveness lock is gone and whose jobs the
-- leader has not given back yet (a takeover deletes the session row).
SELECT
    'dead_sessions',
    '',
    count(*)::float8
FROM /* TEMPLATE: schema */river_bpmn_client_session
WHERE dead_since IS NOT NULL
UNION ALL
-- Exclusive keys held by the running jobs of dead sessions: the held rows
-- of the lock table (one per key in recent use) joined to their jobs and
-- the sessions that fetched them.
SELECT
    'dead_client_keys',
    '',
    count(*)::float8
FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock AS lock
JOIN /* TEMPLATE: schema */river_job AS job
    ON job.id = lock.job_id
    AND job.attempt = lock.attempt
    AND job.state = 'running'
WHERE lock.job_id IS NOT NULL
    AND EXISTS (
        SELECT 1
        FROM /* TEMPLATE: schema */river_bpmn_client_session AS session
        WHERE session.client_id = job.attempted_by[array_upper(job.attempted_by, 1)]
            AND session.dead_since IS NOT NULL
            AND job.attempted_at >= session.started_at
            AND job.attempted_at < coalesce(session.superseded_at, 'infinity')
    )
UNION ALL
-- Held jobs by reason: an index-only scan of river_bpmn_hold's reason index
-- (riverbpmn/007); the cost follows the number of held jobs.
SELECT
    'held',
    reason,
    count(*)::float8
FROM /* TEMPLATE: schema */river_bpmn_hold
GROUP BY reason
UNION ALL
-- Suspended job definitions and process definitions (one row each).
SELECT
    'suspended',
    target_type,
    count(*)::float8
FROM /* TEMPLATE: schema */river_bpmn_suspension
WHERE target_type IN ('job_definition', 'process_definition')
GROUP BY target_type;
