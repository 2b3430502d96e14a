-- What the next occurrence of a timer keeps of the firing job $1: its args,
-- kind, queue, River priority and tags, and its metadata without the job
-- context (resolved again from the template), the timer metadata (written
-- anew), its hold, and River's and riverbpmn's per-run keys.
SELECT args, kind, queue, priority, tags,
    metadata - 'bpmn' - 'bpmn_timer' - 'bpmn_hold' - 'output' - 'snoozes' - 'cancel_attempted_at' - 'bpmn_executed_due'
FROM /* TEMPLATE: schema */river_job
WHERE id = $1;
