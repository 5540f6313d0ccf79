#!/usr/bin/env bash
# A PostgreSQL 15 of its own for the cluster tests, on loopback, in a folder of its own (Debian's packages,
# installed when missing). Run as root; the server runs as the postgres user.
#
#   postgres.sh start DIR PORT    make DIR (initdb) unless it exists, start the server; prints its URL
#   postgres.sh restart DIR       restart it (fast shutdown: open connections are cut)
#   postgres.sh stop DIR          stop it and remove DIR
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
command=${1:?usage: postgres.sh start DIR PORT | restart DIR | stop DIR}
dir=${2:?the folder is missing}

case "$command" in
start)
    port=${3:?the port is missing}
    if [ ! -x "$BIN/initdb" ]; then
        apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 >&2
    fi
    if [ ! -d "$dir/data" ]; then
        mkdir -p "$dir"
        chown postgres "$dir"
        runuser -u postgres -- "$BIN/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
    fi
    runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
restart)
    runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w -m fast restart >/dev/null
    ;;
stop)
    if [ -d "$dir/data" ]; then
        runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -w -m fast stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
*)
    echo "postgres.sh: unknown command $command" >&2
    exit 2
    ;;
esac
