#!/usr/bin/env bash
# Prints the live-server that the test scripts run: $LIVE_SERVER when set (nothing is built), else the
# package's debug build, built first (the build's output goes to standard error).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${LIVE_SERVER:-}" ]; then
    echo "$LIVE_SERVER"
else
    swift build --product live-server >&2
    echo "$(swift build --show-bin-path)/live-server"
fi
