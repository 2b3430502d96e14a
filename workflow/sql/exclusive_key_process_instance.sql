-- The exclusive key of a river_job row with scope exclusive.ProcessInstance:
-- its process instance, for a job whose resolved job context says it is
-- exclusive; NULL otherwise (plain River jobs, non-exclusive jobs, jobs of no
-- instance). Must agree with exclusive.Key.
CASE WHEN river_job.metadata -> 'bpmn' -> 'exclusive' = 'true'::jsonb
    THEN nullif(river_job.metadata -> 'bpmn' ->> 'process_instance_id', '')
END
