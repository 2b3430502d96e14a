-- NextVersion: the version a new process definition of key $1 gets: one
-- more than the last one given (river_bpmn_process_key), never reused.
INSERT INTO /* TEMPLATE: schema */river_bpmn_process_key (key, last_version)
VALUES ($1::text, 1)
ON CONFLICT (key) DO UPDATE SET last_version = river_bpmn_process_key.last_version + 1
RETURNING last_version;
