-- riverbpmn migration line "riverbpmn", version 24: deployments of BPMN
-- models (package deployment).
--
-- A deployment holds one or more resources (BPMN files) and the process
-- definitions read from them; deploying a process key again makes a new
-- version of it, with job definitions of its own, so that jobs keep the
-- definition they were created with. Job definitions read from a model are
-- rows of river_bpmn_job_definition like the ones declared in Go, so that
-- overriding priorities, suspension, the insert trigger of migration
-- riverbpmn/002 and every tool reading that table work on them unchanged;
-- their deployment_id says where they came from (NULL: declared in Go).
CREATE TABLE /* TEMPLATE: schema */river_bpmn_deployment (
    -- Sortable by creation: a hex timestamp (microseconds), then random
    -- hex.
    id text PRIMARY KEY CHECK (char_length(id) BETWEEN 1 AND 255),
    name text NOT NULL DEFAULT '',
    tenant_id text NOT NULL DEFAULT '',
    -- Where the deployment came from ("cli", "go", "console", or the
    -- caller's own word).
    source text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    -- What the reader reported rather than read: {"unsupported": [...],
    -- "ignored": [...]} (package bpmn's Finding).
    findings jsonb NOT NULL DEFAULT '{}'
);

-- The duplicate filter compares a new deployment with the latest one of the
-- same name and tenant.
CREATE INDEX river_bpmn_deployment_name
    ON /* TEMPLATE: schema */river_bpmn_deployment (name, tenant_id, id DESC);

CREATE TABLE /* TEMPLATE: schema */river_bpmn_deployment_resource (
    deployment_id text NOT NULL REFERENCES /* TEMPLATE: schema */river_bpmn_deployment (id) ON DELETE CASCADE,
    name text NOT NULL,
    -- SHA-256 of content, lower-case hex.
    checksum text NOT NULL,
    content bytea NOT NULL,
    PRIMARY KEY (deployment_id, name)
);

CREATE TABLE /* TEMPLATE: schema */river_bpmn_process_definition (
    -- "<key>:<version>".
    id text PRIMARY KEY,
    key text NOT NULL,
    version integer NOT NULL CHECK (version >= 1),
    name text NOT NULL DEFAULT '',
    deployment_id text NOT NULL REFERENCES /* TEMPLATE: schema */river_bpmn_deployment (id) ON DELETE CASCADE,
    resource_name text NOT NULL,
    tenant_id text NOT NULL DEFAULT '',
    -- camunda:jobPriority as written: a constant, an expression or ''.
    priority text NOT NULL DEFAULT '',
    -- [{"activity_id": ..., "called_element": ...}]
    call_activities jsonb NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (key, version)
);

-- The last version given to each process key. Versions are never given
-- twice, even after their deployment is deleted, so that a job definition
-- id ("<key>:<version>:...") always means one definition.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_process_key (
    key text PRIMARY KEY,
    last_version integer NOT NULL
);

CREATE INDEX river_bpmn_process_definition_deployment
    ON /* TEMPLATE: schema */river_bpmn_process_definition (deployment_id);

ALTER TABLE /* TEMPLATE: schema */river_bpmn_job_definition
    ADD COLUMN deployment_id text REFERENCES /* TEMPLATE: schema */river_bpmn_deployment (id) ON DELETE CASCADE,
    ADD COLUMN process_definition_id text,
    ADD COLUMN version integer,
    -- "<key>:<activity>:<slot>": the newest version's definition answers it.
    ADD COLUMN alias text,
    -- Camunda's job definition type and configuration.
    ADD COLUMN type text NOT NULL DEFAULT '',
    ADD COLUMN configuration text NOT NULL DEFAULT '',
    ADD COLUMN exclusive boolean NOT NULL DEFAULT true,
    -- As written in the model: constants or expressions, '' for none.
    ADD COLUMN priority text NOT NULL DEFAULT '',
    ADD COLUMN retry_cycle text NOT NULL DEFAULT '',
    ADD COLUMN timer_type text NOT NULL DEFAULT '',
    ADD COLUMN timer_value text NOT NULL DEFAULT '';

CREATE INDEX river_bpmn_job_definition_deployment
    ON /* TEMPLATE: schema */river_bpmn_job_definition (deployment_id)
    WHERE deployment_id IS NOT NULL;

CREATE INDEX river_bpmn_job_definition_alias
    ON /* TEMPLATE: schema */river_bpmn_job_definition (alias, version DESC)
    WHERE alias IS NOT NULL;
