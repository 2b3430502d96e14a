-- Serializes migrations of one schema ($1, its name) across processes, for
-- River's main line and riverbpmn's alike: a transaction lock, taken in a
-- transaction left open on a connection of its own before the first line is
-- migrated and released when that transaction ends, after the last (a
-- transaction lock, so that a transaction-mode pooler cannot keep it after
-- the connection closed). A process that waited for it then reads the
-- versions the holder applied and applies only what is still missing
-- (nothing, usually).
SELECT pg_advisory_xact_lock(hashtext('riverbpmn migrate ' || $1::text));
