-- HoldReasons: the reasons job $1 is held for, sorted.
SELECT reason
FROM /* TEMPLATE: schema */river_bpmn_hold
WHERE job_id = $1::bigint
ORDER BY reason;
