-- A timer occurrence $1 just inserted 'scheduled' and due soon: available
-- with its future scheduled_at, which River's fetch takes once it has
-- passed, instead of waiting for the job scheduler's next pass.
UPDATE /* TEMPLATE: schema */river_job
SET state = 'available'
WHERE id = $1 AND state = 'scheduled';
