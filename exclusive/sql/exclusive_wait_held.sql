-- ExclusiveWaitHeld: the hold of job $1 (its metadata "bpmn_hold", NULL when
-- not held), and how many held jobs of its exclusive key wait in its queue
-- (0 when it has no key). Held jobs are found through river_bpmn_hold, so the
-- count costs one probe per held job.
SELECT
    river_job.metadata -> 'bpmn_hold',
    coalesce((
        SELECT count(*)
        FROM /* TEMPLATE: schema */river_bpmn_hold AS hold
            JOIN /* TEMPLATE: schema */river_job AS held ON held.id = hold.job_id
        WHERE hold.reason = 'suspended'
            AND held.state = 'pending'
            AND held.queue = river_job.queue
            AND /* TEMPLATE: schema */river_bpmn_ctx_exclusive(held.metadata)
            AND /* KEY_EXPRESSION: held */ = /* EXCLUSIVE_KEY */
    ), 0)
FROM /* TEMPLATE: schema */river_job
WHERE river_job.id = $1::bigint;
