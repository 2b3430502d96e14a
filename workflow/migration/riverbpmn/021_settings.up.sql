-- riverbpmn migration line "riverbpmn", version 21: settings recorded in the
-- schema, so that every tool and every engine working it reads the same.
--
-- One row per setting. The first is "exclusive_scope", the exclusive scope
-- in force (package exclusive: process-instance, root-process-instance or
-- none): the first client that starts records its engine's scope, every
-- later one checks it has the same (a client whose engine has another scope
-- refuses to start, naming both), and the CLI and the console read it to say
-- whether a job waits for its key. The migration records nothing: a schema
-- used before it gets its scope from the first client that starts after it.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_setting (
    name text PRIMARY KEY,
    value text NOT NULL,
    -- When and by which River client (river.Config.ID; empty when recorded
    -- by hand) the value was recorded.
    recorded_at timestamptz NOT NULL DEFAULT now(),
    recorded_by text NOT NULL DEFAULT ''
);

-- A schema already in use when this migration runs (it holds jobs or job
-- definitions) was worked by a version of riverbpmn that enforced exclusive
-- jobs only when configured to. The marker lets the first client that
-- records a scope say so in its log when that scope enforces exclusivity
-- (what an engine configured with nothing now does); a fresh schema has none.
INSERT INTO /* TEMPLATE: schema */river_bpmn_setting (name, value)
SELECT 'schema_predates_exclusive_default', 'true'
WHERE EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_job)
    OR EXISTS (SELECT 1 FROM /* TEMPLATE: schema */river_bpmn_job_definition);
