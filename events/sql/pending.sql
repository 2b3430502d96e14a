-- Pending: whether an event after the cursor exists that Read could not take
-- yet because its transaction had not ended (or the row was not visible).
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_bpmn_event
    WHERE (txid, id) > ($1::text::xid8, $2::bigint)
);
