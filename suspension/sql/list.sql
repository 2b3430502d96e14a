-- SuspensionList: the suspended targets, oldest first, after the keyset
-- position ($2 suspended_at, $3 target_type, $4 target_id; $2 NULL for the
-- first page), at most $1 (a page and one more, which says whether a
-- further page exists), only those of type $5 when it is not ''.
SELECT target_type, target_id, suspended_at
FROM /* TEMPLATE: schema */river_bpmn_suspension
WHERE ($2::timestamptz IS NULL OR (suspended_at, target_type, target_id) > ($2::timestamptz, $3::text, $4::text))
    AND ($5::text = '' OR target_type = $5::text)
ORDER BY suspended_at, target_type, target_id
LIMIT $1::integer;
