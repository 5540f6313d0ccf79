#!/usr/bin/env bash
# Browser test of the live board: builds live-server, then Tests/browser_test.py starts it with teams
# alpha and beta, drives headless Chromium through the DevTools protocol (two tabs editing at once, a
# server stop and restart with a command queued offline, a fresh tab, a refused token, the title edit, the
# phone layout) and takes screenshots. See browser_test.py for the checks.
#
#   bash Examples/LiveServer/Tests/browser-test.sh                      # screenshots to a temporary folder
#   UPDATE_SCREENSHOT=1 bash Examples/LiveServer/Tests/browser-test.sh  # writes Docs/desktop.png, Docs/phone.png
#   LIVE_SERVER=/path/to/live-server bash ...                           # uses that binary, builds nothing
#
# Needs Debian's chromium and python3 (standard library only); node, when installed, also runs
# Tests/page-logic.test.js. Exits 0 only when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v chromium >/dev/null || { echo "browser-test: chromium is not installed (apt-get install -y --no-install-recommends chromium)"; exit 1; }
command -v python3 >/dev/null || { echo "browser-test: python3 is not installed"; exit 1; }
server=$(bash Tests/live-server-path.sh)
docs=()
if [ "${UPDATE_SCREENSHOT:-0}" = 1 ]; then docs=(--docs Docs); fi
exec timeout --kill-after=10 600 python3 Tests/browser_test.py --server "$server" "${docs[@]}"
