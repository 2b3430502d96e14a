-- Tenant indexes for clients that fetch fairly across tenants
-- (Acquisition.FairByTenant), created by Engine.EnableTenantFairness (which a
-- fair client's start calls for its own order) rather than by a migration,
-- so that a database whose clients never fetch fairly pays nothing for them
-- on insert, and one whose fair clients all fetch in one order pays for one.
--
-- A fair fetch skip-scans the distinct tenants of the queue's available jobs
-- (one probe per tenant) and reads each tenant's first jobs in the client's
-- order: each index holds the available jobs by queue, tenant
-- (JobContext.TenantID, '' for none), then one acquisition order, exactly
-- as the non-fair indexes of migration riverbpmn/016 have it (enabled keys
-- by priority, timers first, due date, then River's priority, scheduled_at,
-- id; with due date first, scheduled_at, priority, id). The name's suffix
-- says which keys: p (ByPriority), t (TimersFirst), d (ByDueDate). They
-- cover every available job, those without a tenant included, so that jobs
-- without a tenant are one more tenant (''), read in order by an equality
-- like any other. Once created, every insert of an available job pays one
-- index entry per tenant index.
--
-- One statement per index (CREATE INDEX CONCURRENTLY runs outside a
-- transaction); the Go side splits this file on the blank-line-separated
-- statements and runs those of the indexes asked for.
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')), priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_p
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_t
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_d
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')), scheduled_at, priority, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_pt
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC,
        /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_pd
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC, scheduled_at, priority, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_td
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, scheduled_at, priority, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_ptd
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(/* TEMPLATE: schema */river_bpmn_ctx_tenant(metadata), '')),
        /* TEMPLATE: schema */river_bpmn_ctx_priority(metadata) DESC,
        /* TEMPLATE: schema */river_bpmn_ctx_is_timer(metadata) DESC, scheduled_at, priority, id
    )
    WHERE state = 'available';
