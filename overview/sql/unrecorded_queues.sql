-- UnrecordedQueues: queues that have unfinished jobs but no record in
-- river_queue (no client has worked them), with those jobs by state.
SELECT
    queue,
    count(*) FILTER (WHERE state = 'available'),
    count(*) FILTER (WHERE state = 'running'),
    count(*) FILTER (WHERE state IN ('scheduled', 'retryable', 'pending'))
FROM /* TEMPLATE: schema */river_job j
WHERE state IN ('available', 'running', 'scheduled', 'retryable', 'pending')
    AND NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_queue q WHERE q.name = j.queue)
GROUP BY queue
ORDER BY queue
LIMIT 1000;
