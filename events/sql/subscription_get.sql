-- SubscriptionGet: a named subscription's cursor.
SELECT txid::text, id
FROM /* TEMPLATE: schema */river_bpmn_event_subscription
WHERE name = $1::text;
