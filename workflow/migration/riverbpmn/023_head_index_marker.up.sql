-- riverbpmn migration line "riverbpmn", version 23: the marker of the
-- on-demand head-of-key indexes.
--
-- The head-of-key indexes of the orders with timers first or due date
-- (workflow/sql/exclusive_head_index_create.sql, created on demand) share
-- their leading columns (the key, the queue, often ~priority) with each
-- other and with migration 020's by priority. PostgreSQL estimates a row
-- comparison by its first column alone, so to the planner those indexes
-- cost the same for a head probe, and it may read a probe over another
-- order's index, which holds the key's jobs in the wrong order and makes
-- the probe read every waiting job of the key at one priority. Each of
-- those indexes is therefore partial on river_bpmn_head_index(metadata,
-- ORDER), ORDER naming its order ('t', 'd', 'pt', 'pd', 'td', 'ptd'), and
-- the probe of a client fetching in that order states the same condition:
-- only that index is usable for it (its predicate is implied), and it is
-- the cheapest (a partial index's predicate counts in its estimate), while
-- no other probe can use it. The condition is always true; the function
-- is PL/pgSQL so that the planner neither inlines nor folds it. It is
-- evaluated only on inserts into those indexes, which exist only where a
-- client fetches in such an order.
CREATE FUNCTION /* TEMPLATE: schema */river_bpmn_head_index(metadata jsonb, head_order text)
RETURNS boolean
LANGUAGE plpgsql
IMMUTABLE
PARALLEL SAFE
AS $$
BEGIN
    RETURN true;
END
$$;
