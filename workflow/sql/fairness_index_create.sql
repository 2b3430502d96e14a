-- Tenant indexes for clients that fetch fairly across tenants
-- (Acquisition.FairByTenant), created by Engine.EnableTenantFairness (which a
-- fair client's start calls) rather than by a migration, so that a database
-- whose clients never fetch fairly pays nothing for them on insert.
--
-- A fair fetch skip-scans the distinct tenants of the queue's available jobs
-- (one probe per tenant) and reads each tenant's first jobs in the client's
-- order: these indexes hold the available jobs by queue, tenant
-- (JobContext.TenantID, '' for none), then the order (River's; by int64
-- priority first). They cover every available job, those without a tenant
-- included, so that jobs without a tenant are one more tenant (''), read in
-- order by an equality like any other. Once created, every insert of an
-- available job pays two index entries.
--
-- One statement each (CREATE INDEX CONCURRENTLY runs outside a
-- transaction); the Go side splits this file on the blank-line-separated
-- statements.
CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(metadata -> 'bpmn' ->> 'tenant_id', '')), priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX CONCURRENTLY IF NOT EXISTS river_bpmn_fetch_tenant_p
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(metadata -> 'bpmn' ->> 'tenant_id', '')),
        /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available';
