-- LockDeployment: locks deployment $1 for its deletion.
SELECT id FROM /* TEMPLATE: schema */river_bpmn_deployment WHERE id = $1::text FOR UPDATE;
