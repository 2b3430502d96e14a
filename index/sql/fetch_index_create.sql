-- Fetch-order indexes: the index a client whose Acquisition orders by
-- priority (p), timers first (t) and/or due date (d) reads, one per
-- combination of those keys (a client in River's order reads River's own
-- index). Created by Engine.EnableFetchOrderIndexes, which a client calls
-- for its own order when it starts, rather than by a migration: every index
-- here takes an entry at every insert of an available job (and every move
-- back to available), so a database whose clients all fetch in River's
-- order pays nothing for them, and one whose clients fetch by priority pays
-- for one. Migration riverbpmn/003 created all seven; migration 015 dropped
-- them.
--
-- Each holds the available jobs by queue, then the order keys, then River's
-- own order (priority, scheduled_at, id; with due date, scheduled_at,
-- priority, id), which is the fetch plan's order (package fetchplan).
--
-- One statement per index (CREATE INDEX CONCURRENTLY runs outside a
-- transaction); the Go side splits this file on the blank-line-separated
-- statements and runs those of the indexes asked for.
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_p ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_t ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_d ON /* TEMPLATE: schema */river_job
    (queue, scheduled_at, priority, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_pt ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_pd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_td ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_ptd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
