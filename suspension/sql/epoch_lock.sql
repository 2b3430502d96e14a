-- SuspensionEpochLock: serialise suspensions and activations (they are
-- rare) on the epoch row, and say whether nothing is suspended: then
-- suspending the first target must wait for every transaction that learnt
-- that nothing is (see lock.sql and migration riverbpmn/007). The lock
-- timeout bounds how long inserts queue behind a suspension waiting for a
-- long inserting transaction.
SELECT
    set_config('lock_timeout', $1::text, true),
    NOT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_suspension) AS nothing_suspended
FROM /* TEMPLATE: schema */river_bpmn_suspension_epoch
FOR UPDATE;
