-- riverbpmn migration line "riverbpmn", version 19: the outbox remembers how
-- far it was pruned (package events).
--
-- A subscriber away for longer than the retention came back to a cursor
-- whose next events had been deleted, and nothing said so: it carried on
-- after the gap. Prune (events/sql/prune.sql) now records, in the statement
-- that deletes, the cursor of the last event it deleted; a subscriber reads
-- it in the snapshot of each read (events/sql/pruned.sql), and a cursor
-- below it means events after the cursor are gone: Subscribe reports
-- events.ErrPruned (or, with SubscribeConfig.SkipPruned, logs the gap and
-- goes on after it). One row, written once per prune statement; nothing on
-- the path of a job.
CREATE TABLE /* TEMPLATE: schema */river_bpmn_event_pruned (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    txid xid8 NOT NULL,
    id bigint NOT NULL,
    pruned_at timestamptz NOT NULL DEFAULT now()
);
