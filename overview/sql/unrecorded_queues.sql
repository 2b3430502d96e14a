-- UnrecordedQueues: queues that have unfinished jobs but no record in
-- river_queue: no client has ever worked them.
SELECT queue, count(*)
FROM /* TEMPLATE: schema */river_job j
WHERE state IN ('available', 'running', 'scheduled', 'retryable', 'pending')
    AND NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_queue q WHERE q.name = j.queue)
GROUP BY queue
ORDER BY queue
LIMIT 1000;
