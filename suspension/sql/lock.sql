-- SuspensionLock: take, until the end of the transaction, the advisory
-- locks that the insert trigger of migration riverbpmn/007
-- (river_bpmn_job_insert_hold) takes shared for a job of target ($2 type, $3
-- id); $1 is AdvisoryLockClass. Runs after epoch_lock.sql in the same
-- transaction. When nothing is suspended yet ($4), it first takes the lock
-- "<river_job oid>:any" that every inserting transaction takes to learn that
-- nothing is; then the target's bucket lock (LockBuckets buckets). The keys
-- must stay identical to the trigger's, and the order (any, then bucket) is
-- the trigger's too, so the two never deadlock.
SELECT
    CASE WHEN $4::boolean THEN pg_advisory_xact_lock($1::int4,
        hashtext('/* TEMPLATE: schema */river_job'::regclass::oid::text || ':any')) END,
    pg_advisory_xact_lock($1::int4,
        hashtext('/* TEMPLATE: schema */river_job'::regclass::oid::text || ':' || (hashtext($2::text || ':' || $3::text) & 31)::text));
