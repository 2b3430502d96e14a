-- JobExecuteProgress: job $1 as River reads it, for Engine.ExecuteJob
-- waiting for its run.
SELECT /* COLUMNS: river_job */
FROM /* TEMPLATE: schema */river_job
WHERE id = $1;
