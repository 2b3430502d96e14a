-- InsertJobDefinitions: the job definitions of one new process definition
-- ($1 key, $2 deployment, $3 process definition id, $4 version; $5..$14
-- are parallel arrays). Kind is '': a deployed job definition runs whatever
-- River kind its jobs are inserted as.
INSERT INTO /* TEMPLATE: schema */river_bpmn_job_definition
    (id, process_definition_key, activity_id, kind, deployment_id, process_definition_id, version, alias,
     type, configuration, exclusive, priority, retry_cycle, timer_type, timer_value)
SELECT t.id, $1::text, t.activity, '', $2::text, $3::text, $4::integer, t.alias,
    t.type, t.configuration, t.exclusive, t.priority, t.retry_cycle, t.timer_type, t.timer_value
FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::boolean[], $11::text[], $12::text[], $13::text[], $14::text[])
    AS t(id, activity, alias, type, configuration, exclusive, priority, retry_cycle, timer_type, timer_value);
