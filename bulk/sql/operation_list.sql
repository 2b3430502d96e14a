-- OperationList: the operations before id $1 (0: from the newest), newest
-- first, at most $2.
SELECT /* COLUMNS */
FROM /* TEMPLATE: schema */river_bpmn_bulk_operation o
WHERE $1::bigint = 0 OR o.id < $1::bigint
ORDER BY o.id DESC
LIMIT $2::integer;
