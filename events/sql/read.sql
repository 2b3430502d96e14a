-- Read: the next events after the cursor ($1 txid, $2 id), at most $3, only
-- from transactions that had ended when this statement's snapshot was taken
-- (see migration riverbpmn/006 for why that makes the cursor safe). Served by
-- the primary key (txid, id).
SELECT
    txid::text, id, status, job_id, kind, queue, attempt, retries_left, error,
    process_instance_id, job_context, at, created_at
FROM /* TEMPLATE: schema */river_bpmn_event
WHERE (txid, id) > ($1::text::xid8, $2::bigint)
    AND txid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY txid, id
LIMIT $3::integer;
