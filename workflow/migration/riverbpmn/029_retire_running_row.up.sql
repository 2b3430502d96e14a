-- riverbpmn migration line "riverbpmn", version 29: the running-row exclusive
-- mechanism of the release before is retired; the lock table
-- (river_bpmn_exclusive_lock) is the one mechanism.
--
-- A schema whose setting "exclusive_mechanism" (migration 021) says
-- "running-row" was worked by clients that held a key while a job of the key
-- ran and wrote no lock rows. Clients of this release hold keys by lock rows
-- only, so the two would not exclude each other. This migration therefore
-- refuses to run while such a schema has a live client session (migration
-- 008: a session is live while its backend holds its advisory lock): stop
-- every client of the schema first. It then forgets the record (no record
-- means the lock table, which clients of every release read so) and the lock
-- rows left from before the switch to the running row, which nothing read
-- while it was in force. A client of the release before configured for the
-- running row then refuses to start, since the schema no longer records its
-- mechanism. The running-key indexes that those clients created go too.
DO $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_setting
        WHERE name = 'exclusive_mechanism' AND value = 'running-row'
    ) THEN
        IF EXISTS (
            SELECT 1
            FROM /* TEMPLATE: schema */river_bpmn_client_session AS s
            JOIN pg_locks AS l
                ON l.locktype = 'advisory' AND l.objsubid = 2 AND l.granted
                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND l.pid = s.pid AND l.classid = s.lock_class AND l.objid = s.lock_obj
        ) THEN
            RAISE EXCEPTION 'riverbpmn migration 29: this schema records the running-row exclusive mechanism, which this release retires, and a client of it is still running; stop every client of the schema, then migrate again'
                USING ERRCODE = 'object_in_use';
        END IF;
        DELETE FROM /* TEMPLATE: schema */river_bpmn_exclusive_lock;
    END IF;
    DELETE FROM /* TEMPLATE: schema */river_bpmn_setting WHERE name = 'exclusive_mechanism';
END
$$;

DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_running_instance;
DROP INDEX IF EXISTS /* TEMPLATE: schema */river_bpmn_job_exclusive_running_root;
