-- JobAppendError: append attempt error $3 to the errors of job $1 while it is
-- still running attempt $2. Used for conflict failures, which riverbpmn turns
-- into snoozes: River records no error for a snooze. A job that keeps
-- conflicting would grow its errors without bound (conflicts do not use up
-- executions), so nothing is appended past 100 entries: River's snooze count
-- (metadata "snoozes") still counts every conflict.
UPDATE
    /* TEMPLATE: schema */river_job
SET
    errors = array_append(errors, $3::jsonb)
WHERE
    id = $1::bigint
    AND state = 'running'
    AND attempt = $2::smallint
    AND coalesce(cardinality(errors), 0) < 100;
