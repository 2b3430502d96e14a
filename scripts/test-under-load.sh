#!/usr/bin/env bash
# Runs `make test` while the machine is loaded: busy loops (one `yes` process
# each, at normal priority) push the 1-minute load average to TARGET_LOAD or
# more before the first run, and stay until the script ends, however it ends.
#
#   scripts/test-under-load.sh            # one loaded `make test`
#   RUNS=3 scripts/test-under-load.sh     # three in a row; stops at the first failure
#
# Settings (environment):
#   RUNS         number of `make test` runs in a row (default 1)
#   TARGET_LOAD  1-minute load average to reach before the first run (default 8)
#   LOAD_PROCS   busy loops to start (default: 4 per core, at least TARGET_LOAD)
#   LOAD_WAIT    seconds to wait for TARGET_LOAD at most (default 240); the
#                runs start anyway after it, saying so
#   MAKE_TARGET  what to run under load (default test)
#
# The load average is printed before and after each run and every 30 s
# during it; the summary gives each run's wall time, result and the lowest
# and highest load average seen while it ran.
set -uo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-1}
TARGET_LOAD=${TARGET_LOAD:-8}
cores=$(nproc 2>/dev/null || echo 2)
default_procs=$((4 * cores))
((default_procs < TARGET_LOAD)) && default_procs=$TARGET_LOAD
LOAD_PROCS=${LOAD_PROCS:-$default_procs}
LOAD_WAIT=${LOAD_WAIT:-240}
MAKE_TARGET=${MAKE_TARGET:-test}

loadavg() { cut -d' ' -f1 /proc/loadavg; }
# ge A B: A >= B for decimal numbers.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

loaders=()
sampler=""
cleanup() {
	[[ -n "$sampler" ]] && kill "$sampler" 2>/dev/null
	if ((${#loaders[@]} > 0)); then
		kill "${loaders[@]}" 2>/dev/null
		wait "${loaders[@]}" 2>/dev/null
		echo "test-under-load: stopped ${#loaders[@]} busy loops (load average $(loadavg))"
	fi
	loaders=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "test-under-load: $cores cores, load average $(loadavg); starting $LOAD_PROCS busy loops"
for ((i = 0; i < LOAD_PROCS; i++)); do
	yes >/dev/null &
	loaders+=($!)
done

waited=0
until ge "$(loadavg)" "$TARGET_LOAD"; do
	if ((waited >= LOAD_WAIT)); then
		echo "test-under-load: load average $(loadavg) after ${waited}s, below $TARGET_LOAD; running anyway"
		break
	fi
	sleep 5
	waited=$((waited + 5))
done
echo "test-under-load: load average $(loadavg) after ${waited}s (target $TARGET_LOAD)"

summary=()
status=0
for ((run = 1; run <= RUNS; run++)); do
	samples=$(mktemp)
	loadavg >"$samples"
	(while sleep 30; do
		l=$(loadavg)
		echo "$l" >>"$samples"
		echo "test-under-load: [run $run] load average $l"
	done) &
	sampler=$!
	echo "test-under-load: run $run/$RUNS: make $MAKE_TARGET, load average $(loadavg)"
	start=$(date +%s)
	make --no-print-directory "$MAKE_TARGET"
	rc=$?
	elapsed=$(($(date +%s) - start))
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	sampler=""
	loadavg >>"$samples"
	range=$(sort -g "$samples" | sed -n '1p;$p' | paste -sd- -)
	rm -f "$samples"
	result=$([[ $rc -eq 0 ]] && echo PASS || echo "FAIL (exit $rc)")
	line="run $run: $result in $((elapsed / 60))m$((elapsed % 60))s, load average $range"
	summary+=("$line")
	echo "test-under-load: $line"
	if [[ $rc -ne 0 ]]; then
		status=$rc
		break
	fi
done

echo "test-under-load: summary ($LOAD_PROCS busy loops, $cores cores):"
printf '  %s\n' "${summary[@]}"
exit $status
