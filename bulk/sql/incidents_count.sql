-- IncidentsCount: how many open incidents a bulk retry will walk: those up
-- to incident id $1 that the filter (sql/incidents_filter.sql, from $2)
-- keeps. Served by
-- river_bpmn_incident_open (migration 004).
SELECT
    count(*)
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    resolved_at IS NULL
    AND id <= $1::bigint
    AND /* FILTER */;
