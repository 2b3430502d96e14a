-- Serializes migrations of one schema ($1, its name) across processes, for
-- River's main line and riverbpmn's alike: a session lock, taken on a
-- connection of its own before the first line is migrated and released
-- when that connection closes, after the last. A process that waited for it
-- then reads the versions the holder applied and applies only what is still
-- missing (nothing, usually).
SELECT pg_advisory_lock(hashtext('riverbpmn migrate ' || $1::text));
