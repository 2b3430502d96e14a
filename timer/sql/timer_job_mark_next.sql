-- The next occurrence $1, just inserted through River: its unique key $2,
-- unique in every state (River's unique index then refuses a second copy of
-- the occurrence), and, near due ($3), the state available with its future
-- scheduled_at, which River's fetch takes once it has passed. A job the
-- insert trigger held (suspended) stays held.
UPDATE /* TEMPLATE: schema */river_job
SET unique_key = $2::bytea,
    unique_states = B'11111111',
    state = CASE WHEN $3::boolean AND state = 'scheduled' THEN 'available' ELSE state END::/* TEMPLATE: schema */river_job_state
WHERE id = $1;
