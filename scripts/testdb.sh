#!/usr/bin/env bash
# scripts/testdb.sh - make a PostgreSQL test database available and print its URL.
#
# Usage:  export TEST_DATABASE_URL="$(scripts/testdb.sh)"
#
# Exactly one line (the database URL) is written to stdout; every progress or
# diagnostic message goes to stderr. Run with --help for details.

set -euo pipefail

usage() {
	cat <<'EOF'
Usage: scripts/testdb.sh [--help]

Make a PostgreSQL test database available and print ONE line to stdout: the
database URL to use for the Go tests, e.g.

    export TEST_DATABASE_URL="$(scripts/testdb.sh)"

All progress and diagnostic messages go to stderr. Strategy, first hit wins:

  1. TEST_DATABASE_URL is set and answers (psql 'select 1', or pg_isready when
     psql is missing): print it unchanged.
  2. Local PostgreSQL on 127.0.0.1:5432, user postgres, trust auth. A stopped
     Debian cluster on that port is started with
     'pg_ctlcluster --skip-systemctl-redirect <version> <name> start'.
     The test database is created if missing. The system cluster's
     configuration is never changed.
  3. A throwaway cluster owned by the 'postgres' system user (or by the current
     user when not run as root) in $RIVERBPMN_PGDATA on 127.0.0.1:$RIVERBPMN_PG_PORT,
     trust auth, fsync/synchronous_commit/full_page_writes off,
     max_connections=200. It is reused (and started if needed) on later runs.
     If no PostgreSQL server binaries exist under /usr/lib/postgresql/*/bin,
     the 'postgresql' package is installed with apt-get first (needs root);
     if that auto-creates a usable 'main' cluster, step 2 uses it.

Exits non-zero with an error message on stderr if nothing works.

Environment:
  TEST_DATABASE_URL             URL to try first (step 1).
  RIVERBPMN_TEST_DB             test database name (default: river_test).
  RIVERBPMN_PGDATA              throwaway cluster directory
                                (default: /tmp/riverbpmn-pg).
  RIVERBPMN_PG_PORT             throwaway cluster port (default: 54329).
  RIVERBPMN_PG_MAX_CONNECTIONS  throwaway cluster max_connections (default: 200).
  RIVERBPMN_TESTDB_SKIP_LOCAL=1 skip step 2 (always use the throwaway cluster).
  RIVERBPMN_TESTDB_NO_INSTALL=1 never run apt-get; fail instead.

Stop / remove the throwaway cluster (as root):
  runuser -u postgres -- /usr/lib/postgresql/<ver>/bin/pg_ctl -D /tmp/riverbpmn-pg stop
  rm -rf /tmp/riverbpmn-pg
EOF
}

case "${1:-}" in
-h | --help | help)
	usage
	exit 0
	;;
"") ;;
*)
	echo "testdb.sh: unknown argument: $1 (see --help)" >&2
	exit 2
	;;
esac

# Keep the real stdout on fd 3 for the final URL; everything else (including
# stdout of pg_ctl, apt-get, ...) goes to stderr.
exec 3>&1 1>&2

log() { printf 'testdb.sh: %s\n' "$*" >&2; }
die() {
	printf 'testdb.sh: ERROR: %s\n' "$*" >&2
	exit 1
}

# emit_url URL: print the result on the real stdout and exit successfully.
emit_url() {
	printf '%s\n' "$1" >&3
	exit 0
}

# ---------------------------------------------------------------- settings ---

TEST_DB="${RIVERBPMN_TEST_DB:-river_test}"
LOCAL_HOST=127.0.0.1
LOCAL_PORT=5432
PGDATA_DIR="${RIVERBPMN_PGDATA:-/tmp/riverbpmn-pg}"
THROWAWAY_PORT="${RIVERBPMN_PG_PORT:-54329}"
MAX_CONNECTIONS="${RIVERBPMN_PG_MAX_CONNECTIONS:-200}"
SKIP_LOCAL="${RIVERBPMN_TESTDB_SKIP_LOCAL:-0}"
NO_INSTALL="${RIVERBPMN_TESTDB_NO_INSTALL:-0}"
PG_OS_USER=postgres   # OS user that owns the throwaway cluster when run as root
PG_SUPERUSER=postgres # database superuser name
WAIT_SECONDS=30       # bound for "wait until the server answers"
CONNECT_TIMEOUT=5     # libpq connect_timeout for every probe

[[ "$TEST_DB" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
	die "RIVERBPMN_TEST_DB='$TEST_DB' is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)"
if ! [[ "$THROWAWAY_PORT" =~ ^[1-9][0-9]{0,4}$ ]] || ((THROWAWAY_PORT > 65535)); then
	die "RIVERBPMN_PG_PORT='$THROWAWAY_PORT' is not a valid TCP port"
fi
if ! [[ "$MAX_CONNECTIONS" =~ ^[1-9][0-9]{0,5}$ ]]; then
	die "RIVERBPMN_PG_MAX_CONNECTIONS='$MAX_CONNECTIONS' is not a positive integer"
fi
case "$PGDATA_DIR" in
/*) ;;
*) PGDATA_DIR="$PWD/$PGDATA_DIR" ;;
esac
PGDATA_DIR="${PGDATA_DIR%/}"
[[ -n "$PGDATA_DIR" && "$PGDATA_DIR" != / ]] || die "RIVERBPMN_PGDATA must not be '/'"

# Do not let the caller's libpq environment change what we probe.
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGSERVICE PGSSLMODE PGOPTIONS PGTARGETSESSIONATTRS || true
export PGCONNECT_TIMEOUT="$CONNECT_TIMEOUT"

# ------------------------------------------------------------------ helpers ---

# with_timeout SECONDS CMD...: run CMD bounded in time when timeout(1) exists.
with_timeout() {
	local secs="$1"
	shift
	if command -v timeout >/dev/null 2>&1; then
		timeout "$secs" "$@"
	else
		"$@"
	fi
}

# newest_pg_file NAME: print the newest /usr/lib/postgresql/<ver>/bin/NAME that
# is executable, or nothing.
newest_pg_file() {
	local f
	for f in /usr/lib/postgresql/*/bin/"$1"; do
		if [[ -x "$f" ]]; then printf '%s\n' "$f"; fi
	done | sort -V | tail -n 1
	return 0
}

# newest_server_bindir: print the newest /usr/lib/postgresql/<ver>/bin holding
# initdb, or nothing.
newest_server_bindir() {
	local f
	f="$(newest_pg_file initdb)"
	if [[ -n "$f" ]]; then dirname "$f"; fi
	return 0
}

# find_client TOOL: print the path of a PostgreSQL client tool (PATH first,
# then the newest server/client bin dir), or nothing.
find_client() {
	local tool="$1" p
	if p="$(command -v "$tool" 2>/dev/null)"; then
		# On Debian /usr/bin/psql is pg_wrapper; it only works when a
		# client package is installed, which we check by running it.
		if "$p" --version >/dev/null 2>&1; then
			printf '%s\n' "$p"
			return 0
		fi
	fi
	p="$(newest_pg_file "$tool")"
	if [[ -n "$p" ]]; then printf '%s\n' "$p"; fi
	return 0
}

PSQL=""
PG_ISREADY=""
CREATEDB=""
refresh_clients() {
	PSQL="$(find_client psql)"
	PG_ISREADY="$(find_client pg_isready)"
	CREATEDB="$(find_client createdb)"
}
refresh_clients

# conninfo HOST PORT DBNAME
conninfo() {
	printf 'host=%s port=%s user=%s dbname=%s sslmode=disable connect_timeout=%s' \
		"$1" "$2" "$PG_SUPERUSER" "$3" "$CONNECT_TIMEOUT"
}

# psql_q CONNINFO SQL: run one query, print unaligned tuples-only output.
psql_q() {
	with_timeout 20 "$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

# is_ready HOST PORT: the server accepts connections (no auth check).
is_ready() {
	if [[ -n "$PG_ISREADY" ]]; then
		with_timeout 10 "$PG_ISREADY" -q -h "$1" -p "$2" -t "$CONNECT_TIMEOUT" >/dev/null 2>&1
	else
		psql_q "$(conninfo "$1" "$2" postgres)" 'select 1' >/dev/null 2>&1
	fi
}

# wait_ready HOST PORT: bounded wait until the server accepts connections.
wait_ready() {
	local i
	for ((i = 0; i < WAIT_SECONDS * 2; i++)); do
		is_ready "$1" "$2" && return 0
		sleep 0.5
	done
	return 1
}

# ensure_db HOST PORT: make sure $TEST_DB exists (superuser $PG_SUPERUSER).
ensure_db() {
	local host="$1" port="$2" ci exists err
	ci="$(conninfo "$host" "$port" postgres)"
	exists="$(psql_q "$ci" "select 1 from pg_database where datname = '$TEST_DB'")" || return 1
	if [[ "$exists" != 1 ]]; then
		log "creating database $TEST_DB on $host:$port"
		if [[ -n "$CREATEDB" ]]; then
			err="$(with_timeout 30 "$CREATEDB" -h "$host" -p "$port" -U "$PG_SUPERUSER" "$TEST_DB" 2>&1)" || true
		else
			err="$(psql_q "$ci" "create database \"$TEST_DB\"" 2>&1)" || true
		fi
		# Re-check instead of trusting the exit status: a concurrent run may
		# have created it in the meantime.
		exists="$(psql_q "$ci" "select 1 from pg_database where datname = '$TEST_DB'")" || return 1
		if [[ "$exists" != 1 ]]; then
			log "could not create database $TEST_DB: $err"
			return 1
		fi
	fi
	# Final check: the URL we are about to print really works.
	psql_q "$(conninfo "$host" "$port" "$TEST_DB")" 'select 1' >/dev/null
}

# pool_max_conns is read by pgx (the Go tests), not by libpq: River clients
# hold a listener connection each, and pgxpool's default (4 on 2 cores) is
# too few for tests that run several clients.
url_for() { printf 'postgres://%s@%s:%s/%s?sslmode=disable&pool_max_conns=20\n' "$PG_SUPERUSER" "$1" "$2" "$TEST_DB"; }

# as_pg_user CMD...: run CMD as the throwaway cluster's OS user (initdb and
# postgres refuse to run as root), from / so an unreadable cwd does not matter.
# fds 3 (our real stdout) and 9 (the lock) are closed so that a server started
# here does not inherit them: otherwise "$(scripts/testdb.sh)" would never
# return and the lock would be held by the server forever.
as_pg_user() {
	if ((EUID != 0)); then
		(cd / && "$@") 3>&- 9>&-
	elif command -v runuser >/dev/null 2>&1; then
		(cd / && runuser -u "$PG_OS_USER" -- "$@") 3>&- 9>&-
	else
		(cd / && su "$PG_OS_USER" -s /bin/bash -c "$(printf '%q ' "$@")") 3>&- 9>&-
	fi
}

# ----------------------------------------------------- step 1: given URL ---

# libpq_url URL: URL without pgx's pool_* parameters, which libpq rejects.
libpq_url() { printf '%s' "$1" | sed -E 's/([?&])pool_[a-z_]+=[^&]*&?/\1/g; s/[?&]$//'; }

step_env_url() {
	local url="${TEST_DATABASE_URL:-}"
	[[ -n "$url" ]] || return 1
	if [[ -n "$PSQL" ]]; then
		if with_timeout 15 "$PSQL" -X -q -A -t -d "$(libpq_url "$url")" -c 'select 1' >/dev/null 2>&1; then
			log "using TEST_DATABASE_URL (answers)"
			emit_url "$url"
		fi
	elif [[ -n "$PG_ISREADY" ]]; then
		if with_timeout 15 "$PG_ISREADY" -q -d "$(libpq_url "$url")" -t "$CONNECT_TIMEOUT" >/dev/null 2>&1; then
			log "using TEST_DATABASE_URL (pg_isready ok; psql not installed)"
			emit_url "$url"
		fi
	else
		log "TEST_DATABASE_URL is set but neither psql nor pg_isready is installed to check it"
		return 1
	fi
	log "TEST_DATABASE_URL is set but does not answer; falling back"
	return 1
}

# ---------------------------------------------- step 2: local 127.0.0.1:5432 ---

# local_clusters: print "<version> <name>" of Debian clusters on $LOCAL_PORT.
local_clusters() {
	if command -v pg_lsclusters >/dev/null 2>&1; then
		pg_lsclusters --no-header 2>/dev/null |
			awk -v port="$LOCAL_PORT" '$3 == port { print $1, $2 }' || true
		return 0
	fi
	local conf ver name port
	for conf in /etc/postgresql/*/*/postgresql.conf; do
		[[ -f "$conf" ]] || continue
		name="$(basename "$(dirname "$conf")")"
		ver="$(basename "$(dirname "$(dirname "$conf")")")"
		port="$(sed -n 's/^[[:space:]]*port[[:space:]]*=[[:space:]]*\([0-9]*\).*/\1/p' "$conf" | tail -n 1)"
		[[ "${port:-5432}" == "$LOCAL_PORT" ]] && echo "$ver $name"
	done
	return 0
}

start_local_cluster() {
	local clusters ver name
	clusters="$(local_clusters)"
	if [[ -z "$clusters" ]]; then
		log "no PostgreSQL cluster configured on port $LOCAL_PORT"
		return 1
	fi
	if ! command -v pg_ctlcluster >/dev/null 2>&1; then
		log "pg_ctlcluster not found; cannot start the local cluster"
		return 1
	fi
	while read -r ver name; do
		[[ -n "$ver" ]] || continue
		log "starting local cluster $ver/$name (pg_ctlcluster --skip-systemctl-redirect $ver $name start)"
		if ! with_timeout 90 pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start 3>&- 9>&-; then
			log "pg_ctlcluster $ver $name start failed"
			continue
		fi
		if wait_ready "$LOCAL_HOST" "$LOCAL_PORT"; then
			return 0
		fi
		log "cluster $ver/$name did not answer within ${WAIT_SECONDS}s"
	done <<<"$clusters"
	return 1
}

# try_local: use the local server on 127.0.0.1:5432 (emit + exit on success).
try_local() {
	if [[ "$SKIP_LOCAL" == 1 ]]; then
		log "RIVERBPMN_TESTDB_SKIP_LOCAL=1: skipping the local server on $LOCAL_HOST:$LOCAL_PORT"
		return 1
	fi
	[[ -n "$PSQL" ]] || {
		log "psql not installed; cannot use a local server"
		return 1
	}
	if ! is_ready "$LOCAL_HOST" "$LOCAL_PORT"; then
		log "no server answering on $LOCAL_HOST:$LOCAL_PORT"
		start_local_cluster || return 1
	fi
	local out
	if ! out="$(psql_q "$(conninfo "$LOCAL_HOST" "$LOCAL_PORT" postgres)" 'show max_connections' 2>&1)"; then
		log "cannot connect to $LOCAL_HOST:$LOCAL_PORT as $PG_SUPERUSER without a password: $out"
		return 1
	fi
	if [[ "$out" =~ ^[0-9]+$ ]] && ((out < MAX_CONNECTIONS)); then
		log "note: local server has max_connections=$out (< $MAX_CONNECTIONS); not changing the system cluster's config"
	fi
	ensure_db "$LOCAL_HOST" "$LOCAL_PORT" || return 1
	log "using local server $LOCAL_HOST:$LOCAL_PORT, database $TEST_DB"
	emit_url "$(url_for "$LOCAL_HOST" "$LOCAL_PORT")"
}

# ------------------------------------------------ step 3: throwaway cluster ---

install_postgresql() {
	[[ "$NO_INSTALL" == 1 ]] && die "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin and RIVERBPMN_TESTDB_NO_INSTALL=1"
	((EUID == 0)) || die "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; run as root to install them (apt-get install postgresql)"
	command -v apt-get >/dev/null 2>&1 || die "no PostgreSQL server binaries and no apt-get to install them; install PostgreSQL or set TEST_DATABASE_URL"
	log "installing the postgresql package with apt-get (this takes a while)"
	# fds 3/9 closed: the package may start a server that must not inherit them.
	with_timeout 600 apt-get update -qq 3>&- 9>&- || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive with_timeout 900 apt-get install -y -qq postgresql 3>&- 9>&- ||
		die "apt-get install postgresql failed"
	refresh_clients
}

# write_throwaway_conf BINDIR: (re)write our settings file inside the cluster.
write_throwaway_conf() {
	local conf="$PGDATA_DIR/riverbpmn.conf"
	cat >"$conf" <<EOF
# Managed by scripts/testdb.sh; rewritten before every start. Test-only settings.
listen_addresses = '127.0.0.1'
port = $THROWAWAY_PORT
unix_socket_directories = '$PGDATA_DIR'
max_connections = $MAX_CONNECTIONS
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
	if ((EUID == 0)); then chown "$PG_OS_USER:" "$conf"; fi
	if ! grep -q "^include_if_exists = 'riverbpmn.conf'" "$PGDATA_DIR/postgresql.conf"; then
		printf "\n# Added by scripts/testdb.sh\ninclude_if_exists = 'riverbpmn.conf'\n" >>"$PGDATA_DIR/postgresql.conf"
	fi
}

ensure_os_user() {
	((EUID == 0)) || return 0
	id -u "$PG_OS_USER" >/dev/null 2>&1 && return 0
	log "creating system user $PG_OS_USER"
	useradd --system --user-group --no-create-home --home-dir /var/lib/postgresql \
		--shell /bin/sh "$PG_OS_USER" || die "could not create system user $PG_OS_USER"
}

try_throwaway() {
	local bindir ver out

	# Pick binaries: those matching an existing cluster, else the newest.
	if [[ -f "$PGDATA_DIR/PG_VERSION" ]]; then
		ver="$(cat "$PGDATA_DIR/PG_VERSION")"
		bindir="/usr/lib/postgresql/$ver/bin"
		[[ -x "$bindir/pg_ctl" ]] ||
			die "$PGDATA_DIR holds a PostgreSQL $ver cluster but $bindir/pg_ctl is missing; remove $PGDATA_DIR or install postgresql-$ver"
	else
		bindir="$(newest_server_bindir)"
	fi
	[[ -n "$bindir" ]] || die "no PostgreSQL server binaries found"
	[[ -n "$PSQL" ]] || PSQL="$bindir/psql"
	[[ -n "$PG_ISREADY" ]] || PG_ISREADY="$bindir/pg_isready"
	[[ -n "$CREATEDB" ]] || CREATEDB="$bindir/createdb"

	# Reuse a running throwaway cluster (fast path on the second run).
	if is_ready "$LOCAL_HOST" "$THROWAWAY_PORT"; then
		if out="$(psql_q "$(conninfo "$LOCAL_HOST" "$THROWAWAY_PORT" postgres)" 'show data_directory' 2>&1)" &&
			[[ "$out" -ef "$PGDATA_DIR" ]]; then
			ensure_db "$LOCAL_HOST" "$THROWAWAY_PORT" || die "throwaway cluster answers but database $TEST_DB is unusable"
			log "reusing running throwaway cluster $PGDATA_DIR on $LOCAL_HOST:$THROWAWAY_PORT"
			emit_url "$(url_for "$LOCAL_HOST" "$THROWAWAY_PORT")"
		fi
		die "port $THROWAWAY_PORT is used by another server (data_directory: ${out:-unknown}); set RIVERBPMN_PG_PORT to a free port"
	fi

	ensure_os_user

	# Create the cluster if needed.
	if [[ ! -f "$PGDATA_DIR/PG_VERSION" ]]; then
		if [[ -d "$PGDATA_DIR" ]] && [[ -n "$(ls -A "$PGDATA_DIR")" ]]; then
			die "$PGDATA_DIR exists, is not empty and is not a PostgreSQL cluster; remove it or set RIVERBPMN_PGDATA"
		fi
		log "initialising throwaway cluster in $PGDATA_DIR with $bindir"
		mkdir -p "$PGDATA_DIR" || die "cannot create $PGDATA_DIR"
		if ((EUID == 0)); then chown "$PG_OS_USER:" "$PGDATA_DIR"; fi
		chmod 700 "$PGDATA_DIR" || die "cannot chmod $PGDATA_DIR"
		as_pg_user test -w "$PGDATA_DIR" ||
			die "$PG_OS_USER cannot write to $PGDATA_DIR (is a parent directory private?); set RIVERBPMN_PGDATA elsewhere"
		if ! out="$(as_pg_user "$bindir/initdb" -D "$PGDATA_DIR" -U "$PG_SUPERUSER" \
			--auth=trust -E UTF8 --locale=C --no-sync 2>&1)"; then
			printf '%s\n' "$out" >&2
			die "initdb failed"
		fi
	fi

	write_throwaway_conf
	local logfile="$PGDATA_DIR/server.log"
	if as_pg_user "$bindir/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1; then
		# Running but not answering on our port (e.g. the port changed).
		log "throwaway cluster is running but not on port $THROWAWAY_PORT; restarting it"
		as_pg_user "$bindir/pg_ctl" -D "$PGDATA_DIR" -l "$logfile" -m fast -w -t "$WAIT_SECONDS" restart ||
			{
				tail -n 20 "$logfile" >&2 || true
				die "could not restart the throwaway cluster"
			}
	else
		log "starting throwaway cluster $PGDATA_DIR on $LOCAL_HOST:$THROWAWAY_PORT"
		as_pg_user "$bindir/pg_ctl" -D "$PGDATA_DIR" -l "$logfile" -w -t "$WAIT_SECONDS" start ||
			{
				tail -n 20 "$logfile" >&2 || true
				die "could not start the throwaway cluster (log: $logfile)"
			}
	fi
	wait_ready "$LOCAL_HOST" "$THROWAWAY_PORT" ||
		die "throwaway cluster did not answer on $LOCAL_HOST:$THROWAWAY_PORT within ${WAIT_SECONDS}s (log: $logfile)"
	ensure_db "$LOCAL_HOST" "$THROWAWAY_PORT" || die "could not create database $TEST_DB in the throwaway cluster"
	log "using throwaway cluster $PGDATA_DIR on $LOCAL_HOST:$THROWAWAY_PORT, database $TEST_DB"
	emit_url "$(url_for "$LOCAL_HOST" "$THROWAWAY_PORT")"
}

# -------------------------------------------------------------------- main ---

step_env_url || true

# Serialise the slow paths (cluster start, createdb, initdb, apt-get) between
# concurrent runs. Bounded wait.
if command -v flock >/dev/null 2>&1; then
	lockfile="${TMPDIR:-/tmp}/riverbpmn-testdb.$(id -u).lock"
	if exec 9>"$lockfile"; then
		flock -w 300 9 || die "timed out waiting for lock $lockfile"
	fi
fi

try_local || true

if [[ -z "$(newest_server_bindir)" && ! -f "$PGDATA_DIR/PG_VERSION" ]]; then
	install_postgresql
	# psql may have been missing before: re-check TEST_DATABASE_URL.
	step_env_url || true
	# Installing on Debian normally creates (and may start) a 'main' cluster.
	try_local || true
	[[ -n "$(newest_server_bindir)" ]] || die "postgresql was installed but no initdb found under /usr/lib/postgresql/*/bin"
fi

try_throwaway # emits the URL and exits, or dies with a reason
# shellcheck disable=SC2317 # safety net, should be unreachable
die "no usable PostgreSQL found"
