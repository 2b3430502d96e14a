-- Deletes at most $2 timers that ended before $1 and have no occurrence job
-- left that could still run (every job in open_job_ids is finalized or
-- gone), oldest end first. Rows another transaction has locked (a cancel, a
-- due-date move, a firing) are skipped until the next round.
DELETE FROM /* TEMPLATE: schema */river_bpmn_timer
WHERE id IN (
    SELECT t.id
    FROM /* TEMPLATE: schema */river_bpmn_timer t
    WHERE t.ended_at < $1
      AND NOT EXISTS (
          SELECT 1 FROM /* TEMPLATE: schema */river_job j
          WHERE j.id = ANY (t.open_job_ids) AND j.finalized_at IS NULL
      )
    ORDER BY t.ended_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
);
