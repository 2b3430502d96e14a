-- Releases index_lock.sql's lock.
SELECT pg_advisory_unlock(hashtext('riverbpmn on-demand indexes ' || coalesce(nullif($1::text, ''), current_schema())));
