-- SubscriptionCreate: a new named subscription at a cursor; an existing one
-- is left as it is.
INSERT INTO /* TEMPLATE: schema */river_bpmn_event_subscription (name, txid, id)
VALUES ($1::text, $2::text::xid8, $3::bigint)
ON CONFLICT (name) DO NOTHING;
