-- StopRequested: whether a stop was asked for the job (River's marker).
SELECT coalesce((SELECT metadata ? 'cancel_attempted_at' FROM /* TEMPLATE: schema */river_job WHERE id = $1::bigint), false);
