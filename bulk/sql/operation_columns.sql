o.id, o.action, o.description, o.spec, o.state, o.progress, o.error, o.owner, o.runs, o.created_at, o.heartbeat_at, o.finished_at
