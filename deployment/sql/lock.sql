-- Lock: serialises deployments of one river_job table, so that two
-- deployments of one process key get consecutive versions. $1 is the lock
-- class (deployment.AdvisoryLockClass).
SELECT pg_advisory_xact_lock($1::integer, hashtext('/* TEMPLATE: schema */river_bpmn_deployment'));
