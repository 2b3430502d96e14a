#!/bin/sh
# Installs Debian's PgBouncer if it is missing and prints the path of its
# binary, for the liveness test behind a transaction-mode pooler
# (workflow/liveness_pooler_test.go), which writes its own configuration and
# runs it on a port of its own. The test skips, loudly, when no PgBouncer
# can be installed.
set -e
bin="$(command -v pgbouncer || true)"
if [ -z "$bin" ] && [ -x /usr/sbin/pgbouncer ]; then
	bin=/usr/sbin/pgbouncer
fi
if [ -z "$bin" ]; then
	SUDO=""
	if [ "$(id -u)" != "0" ]; then
		SUDO="sudo"
	fi
	$SUDO apt-get update >&2
	# The package's own service is not wanted: the test runs its own.
	DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 $SUDO apt-get install -y --no-install-recommends pgbouncer >&2
	bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
fi
[ -x "$bin" ] || { echo "pgbouncer.sh: no pgbouncer binary after installing" >&2; exit 1; }
echo "$bin"
