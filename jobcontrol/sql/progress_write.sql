-- ProgressWrite: stores a running job's progress under metadata
-- "bpmn_progress" (River UI shows it). Only the attempt that reports it may
-- write: a job that finished, or was taken over, is left alone.
UPDATE /* TEMPLATE: schema */river_job
SET metadata = jsonb_set(metadata, '{bpmn_progress}', $3::jsonb, true)
WHERE id = $1::bigint
    AND attempt = $2::smallint
    AND state = 'running';
