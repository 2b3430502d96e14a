-- ExclusiveScopeLock: serialises, per schema, recording another exclusive
-- scope (Engine.SetExclusiveScope: the alive-clients check and the write)
-- with a starting client's check of the recorded scope after its liveness
-- session is open; held until the transaction ends. $1 is
-- AdvisoryLockClassExclusiveScope; the second key is the settings table's.
SELECT pg_advisory_xact_lock($1::int4, hashtext('/* TEMPLATE: schema */river_bpmn_setting'::regclass::oid::text));
