-- NextVersion: the version a new process definition of key $1 gets.
SELECT coalesce(max(version), 0) + 1
FROM /* TEMPLATE: schema */river_bpmn_process_definition
WHERE key = $1::text;
