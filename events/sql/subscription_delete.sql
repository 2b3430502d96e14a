-- SubscriptionDelete: forgets a named subscription.
DELETE FROM /* TEMPLATE: schema */river_bpmn_event_subscription
WHERE name = $1::text;
