-- IncidentsOpened: incidents opened per bucket of $2 since $1.
SELECT
    date_bin($2::interval, created_at, $1::timestamptz) AS bucket,
    count(*)
FROM /* TEMPLATE: schema */river_bpmn_incident
WHERE created_at >= $1::timestamptz
GROUP BY 1;
