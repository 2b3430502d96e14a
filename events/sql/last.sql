-- Last: the cursor of the last event written (visible or not yet): the last
-- event of the last row (migration riverbpmn/017).
SELECT txid::text, id + event_count - 1
FROM /* TEMPLATE: schema */river_bpmn_event
ORDER BY txid DESC, id DESC
LIMIT 1;
