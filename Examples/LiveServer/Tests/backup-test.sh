#!/usr/bin/env bash
# Backups of a running board: Tests/backup_test.py copies a data folder that a live-server is using while
# a client writes to it, in the two ways Docs/RunningInProduction.md describes (stop, copy, start; and
# pause with SIGSTOP, copy, resume), checks each copy with `live-server --check` and opens it with a second
# live-server, whose board must hold every acknowledged command. About 10 s.
#
#   bash Examples/LiveServer/Tests/backup-test.sh                       # builds live-server (debug) first
#   LIVE_SERVER=/path/to/live-server bash ...                           # uses that binary, builds nothing
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "backup-test: python3 is not installed"; exit 1; }
server=$(bash Tests/live-server-path.sh)
exec timeout --kill-after=10 300 python3 Tests/backup_test.py --server "$server"
