-- Back to migration 003: every fetch-order index, for every database.
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_p ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_t ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_d ON /* TEMPLATE: schema */river_job
    (queue, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_pt ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, priority, scheduled_at, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_pd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_td ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
CREATE INDEX IF NOT EXISTS river_bpmn_fetch_ptd ON /* TEMPLATE: schema */river_job
    (queue, /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, /* TEMPLATE: schema */river_bpmn_is_timer(metadata) DESC, scheduled_at, priority, id)
    WHERE state = 'available';
