-- JobExecuteRequest: make job $1 due now for Engine.ExecuteJob, if it waits
-- to run (available, scheduled or retryable): available with scheduled_at
-- now (River's fetch, and every riverbpmn fetch plan, then take it at their
-- next fetch, in their order and with exclusivity as for any due job). A job
-- due later keeps its due date under metadata key bpmn_executed_due (a
-- timer's next occurrence is computed from it). Returns the state and due
-- date before, the attempt and attempted_at (to tell when the run started),
-- the metadata (why a held job is held), and the database's now.
WITH job AS (
    SELECT id, state, scheduled_at, attempt, attempted_at, metadata, queue
    FROM /* TEMPLATE: schema */river_job
    WHERE id = $1
    FOR UPDATE
), moved AS (
    UPDATE /* TEMPLATE: schema */river_job AS j
    SET state = 'available',
        scheduled_at = least(job.scheduled_at, now()),
        metadata = CASE
            WHEN job.scheduled_at > now() AND jsonb_typeof(j.metadata) = 'object'
                THEN j.metadata || jsonb_build_object('bpmn_executed_due', job.scheduled_at)
            ELSE j.metadata
        END
    FROM job
    WHERE j.id = job.id
        AND job.state IN ('available', 'scheduled', 'retryable')
    RETURNING j.id
)
SELECT job.state::text, job.scheduled_at, job.attempt, job.attempted_at, job.metadata, job.queue,
    EXISTS (SELECT 1 FROM moved), now()
FROM job;
