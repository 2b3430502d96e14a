-- riverbpmn migration line "riverbpmn", version 22: the console's job
-- listing by state.
--
-- The console and Engine.SearchJobs list jobs by state, newest or oldest
-- first (by id), a page at a time. River's indexes serve no such order by
-- state: river_job_prioritized_fetching_index has the queue and priority
-- between state and id, and river_job_state_and_finalized_at_index orders
-- finished jobs by finalized_at. For the states a job passes through on
-- River's hot path (available, running, completed) the primary key serves
-- the listing well (those states are dense, or, for running, few). The
-- other states are sparse among a million completed jobs, where walking the
-- primary key would read the whole table for one page.
--
-- This index holds only jobs in those sparse states. A job that is inserted
-- available, runs and completes never has an entry in it: the index costs
-- River's hot path nothing (PostgreSQL inserts an entry into a partial
-- index only for a row version that satisfies its predicate). A job that is
-- scheduled, retried, held, discarded or cancelled pays one entry per row
-- version in such a state.
CREATE INDEX river_bpmn_job_state_sparse
    ON /* TEMPLATE: schema */river_job (state, id)
    WHERE state IN ('pending', 'scheduled', 'retryable', 'discarded', 'cancelled');
