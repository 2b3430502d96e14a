#!/usr/bin/env bash
# scripts/events-trigger-cost.sh - what the job status event trigger costs
# per statement, for riverbpmn's migration versions side by side.
#
# Usage:  scripts/events-trigger-cost.sh [DATABASE_URL] [ROUNDS] [VERSIONS]
#
# For each riverbpmn migration version of VERSIONS (default "13 17": 013's
# trigger, one outbox row per event, and 017's, one per statement), ROUNDS
# times (default 3), interleaved: a fresh schema migrated up to that version
# with 9,000 available jobs whose job context looks like the bench's, events
# enabled, then one fresh session runs 40 River-like fetches of 100 jobs
# (JobGetAvailable's UPDATE) and 40 completions of them under EXPLAIN
# (ANALYZE, BUFFERS, WAL), its first statement a completion of nothing (as
# an idle River connection's first statement can be: the trigger function's
# plan is cached from its first call). It prints the trigger's time per
# statement (median, p25, min; per job = 2 statements of 100 jobs) and, with
# pg_stat_statements loaded (shared_preload_libraries), the WAL of the
# trigger's outbox inserts per event. It is the measurement behind migration
# riverbpmn/017's header and README "Running jobs".
set -euo pipefail
cd "$(dirname "$0")/.."

url="${1:-${DATABASE_URL:-$(scripts/testdb.sh)}}"
rounds="${2:-3}"
versions="${3:-13 17}"
bin="$(mktemp -d)/riverbpmn"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/riverbpmn
p() { psql -X -q -At -v ON_ERROR_STOP=1 "$url" "$@"; }

stats=no
if p -c "SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'" | grep -q 1 ||
	p -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" 2>/dev/null; then
	p -c "SELECT 1 FROM pg_stat_statements LIMIT 1" >/dev/null 2>&1 && stats=yes
fi

measure() { # measure VERSION
	local v=$1 schema="riverbpmn_trigger_cost_$1"
	p -c "DROP SCHEMA IF EXISTS $schema CASCADE" 2>/dev/null
	p -c "CREATE SCHEMA $schema"
	"$bin" migrate-up --database-url "$url" --schema "$schema" --target-version "$v" >/dev/null
	p <<SQL
INSERT INTO $schema.river_job (args, kind, max_attempts, metadata, priority, queue, state, scheduled_at)
SELECT '{}', 'bench_job', 25,
    jsonb_build_object('bpmn', jsonb_build_object(
        'process_instance_id', 'bench-pi-' || (i % 1000),
        'process_definition_key', 'bench_process',
        'activity_id', 'bench_task',
        'deployment_id', 'bench-dep-' || (i % 4),
        'job_type', CASE WHEN i % 10 = 0 THEN 'timer-transition' ELSE 'async-continuation' END,
        'priority', (i * 7919) % 100,
        'exclusive', true)),
    1, 'default', 'available', now() - interval '1 second'
FROM generate_series(1, 9000) AS i;
SQL
	"$bin" events-enable --database-url "$url" --schema "$schema" >/dev/null
	if [ $stats = yes ]; then
		p -c "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)" >/dev/null
	fi
	{
		[ $stats = yes ] && echo "SET pg_stat_statements.track = 'all';"
		echo "EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) UPDATE $schema.river_job SET state = 'completed', finalized_at = now() WHERE state = 'running' AND id < 0;"
		for _ in $(seq 40); do
			cat <<SQL
EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) WITH locked_jobs AS (
    SELECT * FROM $schema.river_job
    WHERE state = 'available' AND queue = 'default' AND scheduled_at <= now()
    ORDER BY priority ASC, scheduled_at ASC, id ASC LIMIT 100 FOR UPDATE SKIP LOCKED)
UPDATE $schema.river_job SET state = 'running', attempt = river_job.attempt + 1, attempted_at = now(),
    attempted_by = array_append(river_job.attempted_by, 'cost-client')
FROM locked_jobs WHERE river_job.id = locked_jobs.id;
EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) UPDATE $schema.river_job SET state = 'completed', finalized_at = now()
FROM (SELECT id FROM $schema.river_job WHERE state = 'running') r WHERE river_job.id = r.id AND river_job.state = 'running';
SQL
		done
	} | p | python3 -c '
import json, sys, statistics
text = sys.stdin.read()
dec, i, times = json.JSONDecoder(), 0, []
while True:
    i = text.find("[", i)
    if i < 0:
        break
    plan, i = dec.raw_decode(text, i)
    times += [t["Time"] for t in plan[0].get("Triggers", []) if t["Trigger Name"] == "river_bpmn_job_event"]
times = sorted(times[1:])  # the first statement completes nothing
med = statistics.median(times)
print(f"version {sys.argv[1]}: trigger per 100-row statement median {med:.3f} ms, p25 {times[len(times)//4]:.3f}, "
      f"min {times[0]:.3f} ({len(times)} statements); per job {2 * med * 10:.1f} us", end="")
' "$v"
	if [ $stats = yes ]; then
		p -c "SELECT ', WAL ' || round(sum(wal_bytes) / nullif(sum(rows), 0)) || ' B per outbox row, '
			|| round(sum(wal_bytes) / 8000.0) || ' B per event'
			FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND query LIKE 'INSERT INTO%river_bpmn_event%'"
	else
		echo
	fi
	p -c "DROP SCHEMA $schema CASCADE" 2>/dev/null
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
	for v in $versions; do
		measure "$v"
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
