-- riverbpmn migration line "riverbpmn", version 24: bulk operations as rows
-- (package bulk, sql/operation_*.sql).
--
-- A bulk action started from the console is a row: what it does (spec: the
-- action and its selection, a job id list or a search filter), its progress
-- after each batch (the cursor to resume from), and its outcome. The
-- process running it (owner) refreshes heartbeat_at while it runs; a
-- running row whose heartbeat is older than bulk.StaleAfter belongs to a
-- process that died, and another console takes it over and resumes it from
-- its saved progress (each job is changed once, see package bulk). Finished
-- rows are the history of bulk actions.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_bulk_operation (
    id bigserial PRIMARY KEY,
    action text NOT NULL CHECK (char_length(action) BETWEEN 1 AND 32),
    description text NOT NULL CHECK (char_length(description) <= 2000),
    spec jsonb NOT NULL,
    state text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished', 'failed')),
    progress jsonb NOT NULL DEFAULT '{}',
    error text,
    owner text NOT NULL,
    runs integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

-- The running operations, by heartbeat: the takeover's scan.
CREATE INDEX river_bpmn_bulk_operation_running
    ON /* TEMPLATE: schema */river_bpmn_bulk_operation (heartbeat_at)
    WHERE state = 'running';
