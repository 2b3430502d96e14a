-- IncidentsNewest: the newest incident id (0 when none): the bound of a
-- bulk retry that begins now.
SELECT coalesce(max(id), 0) FROM /* TEMPLATE: schema */river_bpmn_incident;
