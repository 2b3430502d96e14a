-- LifecycleLink: link up to $1 prerequisites with unlinked dependencies
-- (function of migration riverbpmn/011). Returns how many rows it linked.
SELECT /* TEMPLATE: schema */river_bpmn_dependency_link($1::int);
