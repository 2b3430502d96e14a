-- Groups: the incidents the filter keeps (bulk's
-- sql/incidents_filter.sql, from $3), of job $2 (JOB, as in list.sql), the
-- open ones only unless $1, grouped
-- by the first line of their error (at most 200 characters), the largest
-- group first, at most 100 groups, with when the first and last opened.
SELECT
    left(split_part(coalesce(message, ''), E'\n', 1), 200),
    count(*),
    min(created_at),
    max(created_at)
FROM
    /* TEMPLATE: schema */river_bpmn_incident
WHERE
    ($1::boolean OR resolved_at IS NULL)
    AND /* JOB */
    AND /* FILTER */
GROUP BY 1
ORDER BY 2 DESC, 1
LIMIT 100;
