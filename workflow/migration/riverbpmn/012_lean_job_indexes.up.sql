-- riverbpmn migration line "riverbpmn", version 12: two indexes fewer on
-- river_job.
--
-- river_bpmn_job_process_instance (001) and river_bpmn_job_job_definition
-- (002) covered every job with a job context in every state. River's state
-- changes are never HOT updates (state is indexed), so each of them took a
-- new entry at every fetch and every completion: two btree inserts per state
-- change that only management calls ever read (the jobs of a process
-- instance, the unfinished jobs of a job definition). They cost about a
-- fifth of the database time of working a job off (docs/benchmarks.md).
--
-- Those calls now find the jobs by containment, metadata @>
-- '{"bpmn": {"process_instance_id": ...}}', which River's own GIN index on
-- metadata (river_job_metadata_index) answers: it already holds every key and
-- value of the job context, and is written on every state change anyway.
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_process_instance;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_job_definition;
