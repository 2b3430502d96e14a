-- Serializes the on-demand index builds of one schema ($1) across clients
-- (session-level, on the connection that builds): a client starting while
-- another builds the same index waits for it, then finds it valid, instead
-- of dropping the half-built index as an invalid leftover. A try, polled by
-- the caller: a session blocked on the lock would hold a snapshot that
-- CREATE INDEX CONCURRENTLY, in the lock holder's session, waits for.
SELECT pg_try_advisory_lock(hashtext('riverbpmn on-demand indexes ' || coalesce(nullif($1::text, ''), current_schema())));
