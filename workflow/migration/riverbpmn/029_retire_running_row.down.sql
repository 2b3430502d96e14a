-- riverbpmn migration line "riverbpmn", version 29, down: nothing to restore.
-- No record of the exclusive mechanism means the lock table, and the
-- running-key indexes were created by the clients that used them.
SELECT 1;
