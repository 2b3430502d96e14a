-- What the next occurrence of a timer keeps of the firing job $1: its args,
-- kind, queue, River priority and tags, and its metadata without what is
-- the occurrence's own or decided again at its insert: the job context
-- (resolved again from the template), the retry cycle of a plain job
-- (bpmn_retry_cycle), the timer metadata (written anew), its hold, the
-- lifecycle options of the first insert (expiry, prerequisites, pending:
-- bpmn_lifecycle, bpmn_dependents), and River's and riverbpmn's per-run
-- keys (output, snoozes, cancel_attempted_at, bpmn_progress,
-- bpmn_executed_due).
SELECT args, kind, queue, priority, tags,
    metadata - 'bpmn' - 'bpmn_retry_cycle' - 'bpmn_timer' - 'bpmn_hold' - 'bpmn_lifecycle' - 'bpmn_dependents'
        - 'output' - 'snoozes' - 'cancel_attempted_at' - 'bpmn_progress' - 'bpmn_executed_due'
FROM /* TEMPLATE: schema */river_job
WHERE id = $1;
