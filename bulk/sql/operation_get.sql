-- OperationGet: operation $1.
SELECT /* COLUMNS */
FROM /* TEMPLATE: schema */river_bpmn_bulk_operation o
WHERE o.id = $1::bigint;
