INSERT INTO /* TEMPLATE: schema */river_bpmn_timer (type, definition, anchor, repetitions_left, kind, queue, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $3)
RETURNING id;
