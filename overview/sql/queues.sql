-- Queues: River's record of every queue (river_queue), with the database's
-- clock, and the queue's unfinished jobs by state.
SELECT
    q.name,
    q.paused_at,
    q.updated_at,
    now(),
    coalesce(c.available, 0),
    coalesce(c.running, 0),
    coalesce(c.waiting, 0)
FROM /* TEMPLATE: schema */river_queue q
LEFT JOIN (
    SELECT
        queue,
        count(*) FILTER (WHERE state = 'available') AS available,
        count(*) FILTER (WHERE state = 'running') AS running,
        count(*) FILTER (WHERE state IN ('scheduled', 'retryable', 'pending')) AS waiting
    FROM /* TEMPLATE: schema */river_job
    WHERE state IN ('available', 'running', 'scheduled', 'retryable', 'pending')
    GROUP BY queue
) c ON c.queue = q.name
ORDER BY q.name
LIMIT 1000;
