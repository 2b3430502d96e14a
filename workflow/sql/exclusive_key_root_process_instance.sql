-- The exclusive key of a river_job row with scope
-- exclusive.RootProcessInstance: the root of its process instance's call
-- hierarchy (the instance itself when no root is recorded), for a job whose
-- resolved job context says it is exclusive; NULL otherwise. Must agree with
-- exclusive.Key.
CASE WHEN river_job.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
    THEN coalesce(
        nullif(river_job.metadata -> 'bpmn' ->> 'root_process_instance_id', ''),
        nullif(river_job.metadata -> 'bpmn' ->> 'process_instance_id', '')
    )
END
