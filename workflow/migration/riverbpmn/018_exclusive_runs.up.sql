-- riverbpmn migration line "riverbpmn", version 18: runs of exclusive jobs
-- (workflow.Config.ExclusiveBatch).
--
-- A fetch with batching takes, with a key's head, the key's next waiting
-- jobs, and the client runs them one after another holding the key once.
-- Such a lock names every job of the run: run_job_ids and run_attempts, in
-- run order, the head first (job_id and attempt still name the head). The
-- lock holds its key while any job of the run still runs the attempt the
-- fetch moved it to (workflow/sql/lock_is_live.sql), not only while the head
-- does: the head may complete while later jobs of the run wait or work.
-- NULL for a lock of one job (every lock taken without batching), which then
-- holds its key while job_id runs attempt, as before. Meaningful only while
-- job_id is set: a key given back keeps its last run's ids until taken again.
ALTER TABLE /* TEMPLATE: schema */river_bpmn_exclusive_lock
    ADD COLUMN run_job_ids bigint[],
    ADD COLUMN run_attempts smallint[],
    ADD CONSTRAINT river_bpmn_exclusive_lock_run_check
        CHECK (run_job_ids IS NULL OR cardinality(run_job_ids) = cardinality(run_attempts));
