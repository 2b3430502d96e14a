-- riverbpmn migration line "riverbpmn", version 11: tenant indexes for
-- clients that fetch fairly across tenants (Acquisition.FairByTenant).
--
-- A fair fetch skip-scans the distinct tenants of the queue's available
-- jobs (one probe per tenant) and reads each tenant's first jobs in the
-- client's order: these indexes hold the available jobs by queue, tenant
-- (JobContext.TenantID, '' for none), then the order (River's; by int64
-- priority first). They cover every available job, those without a tenant
-- included, so that jobs without a tenant are one more tenant (''), read in
-- order by an equality like any other: a partial index on jobs with a tenant
-- would leave the fetch to read past every tenant's backlog to find the
-- jobs without one. The price is an index entry per available job for every
-- insert, fair clients or not; README "Fair acquisition across tenants"
-- gives the measured cost.
CREATE INDEX river_bpmn_fetch_tenant
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(metadata -> 'bpmn' ->> 'tenant_id', '')), priority, scheduled_at, id
    )
    WHERE state = 'available';

CREATE INDEX river_bpmn_fetch_tenant_p
    ON /* TEMPLATE: schema */river_job (
        queue, (coalesce(metadata -> 'bpmn' ->> 'tenant_id', '')),
        /* TEMPLATE: schema */river_bpmn_priority(metadata) DESC, priority, scheduled_at, id
    )
    WHERE state = 'available';
