-- Pruned: the cursor of the last event Prune deleted (migration
-- riverbpmn/019); no row when nothing was ever pruned.
SELECT txid::text, id, pruned_at
FROM /* TEMPLATE: schema */river_bpmn_event_pruned;
