-- SessionClose: a client stops cleanly: its session row goes first, then its
-- lock (with the connection), so nobody ever sees the row without the lock.
DELETE FROM /* TEMPLATE: schema */river_bpmn_client_session
WHERE id = $1::bigint;
