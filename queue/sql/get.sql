-- Get: River's record of queue $1 (river_queue: written by a client's
-- producer when it starts and every 10 minutes), with the database's clock
-- to judge how recent its last report is. No row: River has no record.
SELECT
    updated_at,
    paused_at,
    now()
FROM /* TEMPLATE: schema */river_queue
WHERE name = $1::text;
