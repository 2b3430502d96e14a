-- Whether the schema holds any River job: a schema used before its exclusive
-- scope was first recorded.
SELECT EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job)
