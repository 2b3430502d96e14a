#!/usr/bin/env bash
# scripts/bench-metadata-shapes.sh - what the shape of river_job.metadata costs
# River's own fetch and completion, in SQL alone (no Go, no riverbpmn code).
#
# Usage:  scripts/bench-metadata-shapes.sh [DATABASE_URL] [ROUNDS]
#
# It builds a copy of river_job with River's indexes only (primary key, kind,
# the GIN indexes on args and metadata, River's fetch index and the finalized
# index; no riverbpmn index or trigger) in schema riverbpmn_shapes, then, for
# each metadata shape, queues 20,000 available jobs, runs CHECKPOINT, and
# times 200 rounds of River's fetch of 100 jobs (as its JobGetAvailable
# moves them to running) and their completion, printing the time and the
# WAL written. Shapes: `{}` (stock River), riverbpmn's job context as
# stored before migration 016 (one key per field), the same with short field
# names, the fields as one JSON array, the compact form of migration 016 as
# the middleware writes it (without and with a job definition), one tiny key
# (what any non-empty metadata costs), and one packed string. It is the measurement
# behind README "Benchmarks" / "Where the remaining time goes".
set -euo pipefail
cd "$(dirname "$0")/.."

url="${1:-${DATABASE_URL:-$(scripts/testdb.sh)}}"
rounds="${2:-2}"
schema=riverbpmn_shapes

psql -q "$url" -c "CREATE SCHEMA IF NOT EXISTS ${schema}_base"
go run ./cmd/riverbpmn migrate-up --database-url "$url" --schema "${schema}_base" >/dev/null

psql -q -v ON_ERROR_STOP=1 "$url" <<SQL
DROP SCHEMA IF EXISTS $schema CASCADE;
CREATE SCHEMA $schema;
CREATE TABLE $schema.river_job (LIKE ${schema}_base.river_job INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY);
ALTER TABLE $schema.river_job ADD PRIMARY KEY (id);
CREATE INDEX ON $schema.river_job USING gin (args);
CREATE INDEX ON $schema.river_job (kind);
CREATE INDEX ON $schema.river_job USING gin (metadata);
CREATE INDEX ON $schema.river_job (state, queue, priority, scheduled_at, id);
CREATE INDEX ON $schema.river_job (state, finalized_at) WHERE finalized_at IS NOT NULL;
SQL

# run LABEL METADATA_SQL_OF_i
run() {
	psql -q -v ON_ERROR_STOP=1 "$url" <<SQL
TRUNCATE $schema.river_job;
INSERT INTO $schema.river_job (args, kind, max_attempts, metadata, priority, queue, scheduled_at, state)
SELECT jsonb_build_object('seq', i), 'shape', 25, $2, 1, 'default', now() - interval '1 minute', 'available'
FROM generate_series(1::bigint, 20000) AS i;
VACUUM ANALYZE $schema.river_job;
CHECKPOINT;
SQL
	psql -qAt -v ON_ERROR_STOP=1 "$url" <<SQL
SELECT pg_current_wal_insert_lsn() AS l0 \gset
SELECT clock_timestamp() AS t0 \gset
DO \$\$ BEGIN
FOR r IN 1..200 LOOP
    WITH locked AS (
        SELECT id FROM $schema.river_job
        WHERE state = 'available' AND queue = 'default' AND scheduled_at <= now()
        ORDER BY priority, scheduled_at, id LIMIT 100 FOR UPDATE SKIP LOCKED)
    UPDATE $schema.river_job j
    SET state = 'running', attempt = j.attempt + 1, attempted_at = now(), attempted_by = array_append(j.attempted_by, 'shapes')
    FROM locked WHERE j.id = locked.id;
    UPDATE $schema.river_job SET state = 'completed', finalized_at = now() WHERE state = 'running';
END LOOP; END \$\$;
SELECT format('%-34s %6s ms  %5s B WAL/job  metadata %3s B',
    '$1', round(extract(epoch FROM clock_timestamp() - :'t0') * 1000),
    pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0')::bigint / 20000,
    (SELECT pg_column_size(metadata) FROM $schema.river_job LIMIT 1));
SQL
}

pi="'bench-pi-' || (i % 1000)"
prio="(i * 7919) % 201 - 100"
for ((r = 1; r <= rounds; r++)); do
	echo "round $r/$rounds: 20,000 jobs, 200 fetches of 100 and their completions"
	run "{} (stock River)" "'{}'::jsonb"
	run "job context, one key per field" "jsonb_build_object('bpmn', jsonb_build_object('process_instance_id', $pi, 'process_definition_key', 'bench_process', 'activity_id', 'bench_task', 'deployment_id', 'bench-dep-' || (i % 4), 'job_type', 'async', 'priority', $prio, 'exclusive', true))"
	run "job context, short field names" "jsonb_build_object('bpmn', jsonb_build_object('pi', $pi, 'pd', 'bench_process', 'act', 'bench_task', 'dep', 'bench-dep-' || (i % 4), 'type', 'async', 'prio', $prio, 'x', true))"
	run "job context as one JSON array" "jsonb_build_object('bpmn', jsonb_build_array($pi, 'bench_process', 'bench_task', 'bench-dep-' || (i % 4), 'async', $prio, true))"
	run "compact form (migration 016)" "jsonb_build_object('bpmn', jsonb_build_array($pi, 'bench_process', 'bench_task', NULL::text, $prio, true, 'bench-dep-' || (i % 4), 'async'))"
	run "compact form, job definition set" "jsonb_build_object('bpmn', jsonb_build_array($pi, 'bench_process', 'bench_task', 'bench_process:bench_task', $prio, true, 'bench-dep-' || (i % 4), 'async'))"
	run "one tiny key (a GIN entry pair)" "'{\"bpmn\": 1}'::jsonb"
	run "job context as one packed string" "jsonb_build_object('bpmn', 'pi=' || $pi || ' pd=bench_process act=bench_task dep=bench-dep-' || (i % 4) || ' async prio=' || ($prio) || ' excl')"
done
psql -q "$url" -c "SET client_min_messages = warning" -c "DROP SCHEMA $schema CASCADE" -c "DROP SCHEMA ${schema}_base CASCADE"
