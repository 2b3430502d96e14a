-- Last: the cursor of the last event written (visible or not yet).
SELECT txid::text, id
FROM /* TEMPLATE: schema */river_bpmn_event
ORDER BY txid DESC, id DESC
LIMIT 1;
