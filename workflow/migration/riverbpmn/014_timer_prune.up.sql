-- riverbpmn migration line "riverbpmn", version 14: the index the timer
-- pruner reads (timer.Store.Prune, run by the leader after
-- Config.TimerRetention). Partial on ended timers: a timer takes an entry
-- once, when it ends; the fetch and River's tables are untouched.
CREATE INDEX river_bpmn_timer_ended
    ON /* TEMPLATE: schema */river_bpmn_timer (ended_at)
    WHERE ended_at IS NOT NULL;
