-- Count: how many jobs match the filters, counted up to $1 (the count stops
-- there: a bulk action's confirmation shows "at least" beyond it). The same
-- filters and indexes as jobs.sql.
SELECT
    count(*)
FROM (
    SELECT 1
    FROM /* TEMPLATE: schema */river_job
    WHERE
        /* FILTERS */
    LIMIT $1::integer
) matching;
