-- SuspensionLock: take, until the end of the transaction, the advisory lock
-- that the insert trigger of migration riverbpmn/006 (river_bpmn_job_insert_hold)
-- takes shared for every job of target ($2 type, $3 id); $1 is
-- AdvisoryLockClass. Targets share LockBuckets (32) locks per river_job
-- table: the second key is hashtext("<river_job oid>:<bucket>") with bucket
-- = hashtext("<type>:<id>") & 31. It must stay identical to the trigger's.
SELECT pg_advisory_xact_lock($1::int4,
    hashtext('/* TEMPLATE: schema */river_job'::regclass::oid::text || ':' || (hashtext($2::text || ':' || $3::text) & 31)::text));
