-- Lock: take, until the end of the transaction, the advisory
-- lock that the insert trigger of migration riverbpmn/002 takes shared for
-- every job of job definition $2 ($1 = AdvisoryLockClassJobDefinition). The
-- second key includes river_job's oid so that schemas do not contend; it must
-- stay identical to the trigger's.
SELECT pg_advisory_xact_lock($1::int4, hashtext('/* TEMPLATE: schema */river_job'::regclass::oid::text || ':' || $2::text));
