-- SubscriptionSave: moves a named subscription forward (never back, so two
-- processes sharing a name cannot rewind it).
UPDATE /* TEMPLATE: schema */river_bpmn_event_subscription
SET txid = $2::text::xid8, id = $3::bigint, updated_at = now()
WHERE name = $1::text
    AND (txid, id) < ($2::text::xid8, $3::bigint);
