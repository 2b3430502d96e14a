-- Stop: asks the jobs of the target to stop (TARGET: the ids $1, or every job
-- of process instance $1, through River's GIN index on metadata),
-- as River's JobCancel does for one job: a job waiting to run is cancelled at
-- once; a running job keeps running, is marked (metadata
-- "cancel_attempted_at", which River's completer and rescuer honour), and
-- the client running it is told on River's control channel
-- ($2 = "<schema>.river_control") to cancel its context; a finished job is
-- left as it is. Rows are locked in id order, so two stops never deadlock.
WITH locked AS (
    SELECT id, queue, state, finalized_at
    FROM /* TEMPLATE: schema */river_job
    WHERE /* TARGET */
    ORDER BY id
    FOR UPDATE
),
updated AS (
    UPDATE /* TEMPLATE: schema */river_job j
    SET
        state = CASE WHEN l.state = 'running' THEN j.state ELSE 'cancelled' END,
        finalized_at = CASE WHEN l.state = 'running' THEN j.finalized_at ELSE now() END,
        metadata = jsonb_set(j.metadata, '{cancel_attempted_at}', to_jsonb(clock_timestamp()), true)
    FROM locked l
    WHERE j.id = l.id
        AND l.state NOT IN ('cancelled', 'completed', 'discarded')
        AND l.finalized_at IS NULL
    RETURNING j.id,
        CASE WHEN l.state = 'running' THEN
            pg_notify($2::text, json_build_object('action', 'cancel', 'job_id', j.id, 'queue', l.queue)::text)
        END IS NULL AS notified_null
)
SELECT l.id, l.state::text, u.id IS NOT NULL
FROM locked l
LEFT JOIN updated u ON u.id = l.id
ORDER BY l.id;
