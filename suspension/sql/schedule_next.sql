-- SuspensionScheduleNext: when the next change not yet applied is due (NULL
-- when none).
SELECT min(due_at) FROM /* TEMPLATE: schema */river_bpmn_suspension_schedule WHERE applied_at IS NULL;
