-- OperationInsert: records a bulk operation, running, owned by $4.
INSERT INTO /* TEMPLATE: schema */river_bpmn_bulk_operation AS o (action, description, spec, owner)
VALUES ($1::text, $2::text, $3::jsonb, $4::text)
RETURNING /* COLUMNS */;
