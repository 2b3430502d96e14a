-- Instances: one page of the process instances that have a job matching the
-- filters, at most $1, each once on the page, at its newest matching job
-- (its oldest, oldest first), in that job's id order, after the cursor (a
-- job id).
--
-- The page walks at most $2 matching jobs in id order, as jobs.sql does
-- (the same indexes serve it), and keeps each instance's first job among
-- them. It never probes an instance's other jobs: riverbpmn keeps no index
-- by process instance on river_job (migration 012 dropped it: it cost an
-- index entry at every state change of every job), and a probe of River's
-- GIN index on metadata per candidate costs milliseconds at a million jobs.
-- So a page costs in proportion to $2, and an instance whose matching jobs
-- are far apart in id order can appear again on a later page (at an older
-- job). The instance's page lists all its jobs.
--
-- Each row also carries how many jobs the page walked and the first and
-- last of their ids: a page that walked $2 jobs may have more after it even
-- when it holds fewer than $1 instances (InstancesPage's Next).
WITH walked AS (
    SELECT
        j.id,
        /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata) AS instance,
        /* TEMPLATE: schema */river_bpmn_ctx_definition(j.metadata) AS definition,
        /* TEMPLATE: schema */river_bpmn_ctx_tenant(j.metadata) AS tenant,
        j.state::text AS state,
        j.created_at
    FROM
        /* TEMPLATE: schema */river_job AS j
    WHERE
        /* TEMPLATE: schema */river_bpmn_ctx_instance(j.metadata) <> ''
        AND /* FILTERS */
    ORDER BY
        j.id /* DIRECTION */
    LIMIT $2::integer
), firsts AS (
    SELECT DISTINCT ON (instance)
        *
    FROM
        walked
    ORDER BY
        instance, id /* DIRECTION */
)
SELECT
    id, instance, definition, tenant, state, created_at,
    (SELECT count(*) FROM walked)::integer AS walked,
    (SELECT min(id) FROM walked) AS walked_min,
    (SELECT max(id) FROM walked) AS walked_max
FROM
    firsts
ORDER BY
    id /* DIRECTION */
LIMIT $1::integer;
