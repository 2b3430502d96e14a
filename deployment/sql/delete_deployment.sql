-- DeleteDeployment: deployment $1, its resources, process definitions and
-- job definitions (ON DELETE CASCADE), after locking it.
DELETE FROM /* TEMPLATE: schema */river_bpmn_deployment WHERE id = $1::text RETURNING id;
