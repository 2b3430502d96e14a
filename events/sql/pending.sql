-- Pending: whether an event after the cursor exists that Read could not take
-- yet because its transaction had not ended (or the row was not visible).
-- A row's last event is id + event_count - 1 (migration riverbpmn/017).
SELECT EXISTS (
    SELECT 1
    FROM /* TEMPLATE: schema */river_bpmn_event
    WHERE (txid, id) > ($1::text::xid8, $2::bigint - 1024)
        AND (txid, id + event_count - 1) > ($1::text::xid8, $2::bigint)
);
