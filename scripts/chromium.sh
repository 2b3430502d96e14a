#!/bin/sh
# Installs Debian's headless-capable Chromium (and its driver) for the
# console's end-to-end browser test, if /usr/bin/chromium is missing.
# The test skips with a message when no browser can be installed.
set -e
if [ -x /usr/bin/chromium ]; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
	SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium chromium-driver
