-- Horizon: the cursor for "from now": every transaction below it had ended.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text;
