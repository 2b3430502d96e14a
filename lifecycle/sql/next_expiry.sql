-- LifecycleNextExpiry: the earliest expiration date still to come.
SELECT min(expires_at) FROM /* TEMPLATE: schema */river_bpmn_expiry WHERE expires_at > now();
