-- ExclusiveWake: wake the producers of queue $2 in schema $1 (empty = the
-- connection's current schema) with River's own job insert notification: the
-- channel "<schema>.river_insert" and payload {"queue": ...} that River's
-- client sends after an insert (river v0.51.1, client.go
-- maybeNotifyInsertForQueues, and riverpgxv5's PGNotifyMany), and that every
-- producer of the queue answers with a fetch.
SELECT pg_notify(
    concat(coalesce(nullif($1::text, ''), current_schema()), '.river_insert'),
    json_build_object('queue', $2::text)::text
);
