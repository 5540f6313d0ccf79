#!/usr/bin/env bash
# A PostgreSQL 15 of its own for the cluster tests, on loopback, in a folder of its own (Debian's packages,
# installed when missing). Run as root; the server runs as the postgres user.
#
#   postgres.sh start DIR PORT      make DIR (initdb) unless it exists, start the server; prints its URL
#   postgres.sh start-tls DIR PORT  the same with TLS only: makes a CA and a server certificate for
#                                   127.0.0.1 and localhost (openssl) in DIR/tls, refuses connections
#                                   without TLS, and prints a URL with sslmode=verify-full and
#                                   sslrootcert=DIR/tls/ca.pem. It also listens on 127.0.0.2, an
#                                   address its certificate does not carry (for a test to be refused)
#   postgres.sh restart DIR         restart it (fast shutdown: open connections are cut)
#   postgres.sh stop DIR            stop it and remove DIR
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
command=${1:?usage: postgres.sh start DIR PORT | start-tls DIR PORT | restart DIR | stop DIR}
dir=${2:?the folder is missing}

# A CA of its own and a server certificate it signs, for 127.0.0.1 and localhost, valid for 7 days; the
# server's key readable by the postgres user only (the server refuses it otherwise).
make_certificates() {
    local tls=$1
    if ! command -v openssl >/dev/null; then
        apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssl >&2
    fi
    mkdir -p "$tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
        -subj "/CN=Stillwater test CA" -keyout "$tls/ca.key" -out "$tls/ca.pem" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
        "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 7 \
        -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
    chown postgres "$tls/server.key" "$tls/server.pem"
    chmod 600 "$tls/server.key"
    chmod 644 "$tls/ca.pem"
}

case "$command" in
start | start-tls)
    port=${3:?the port is missing}
    if [ ! -x "$BIN/initdb" ]; then
        apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 >&2
    fi
    if [ ! -d "$dir/data" ]; then
        mkdir -p "$dir"
        chown postgres "$dir"
        runuser -u postgres -- "$BIN/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
    fi
    if [ "$command" = start-tls ] && [ ! -f "$dir/tls/server.pem" ]; then
        make_certificates "$dir/tls"
        printf '%s\n' "ssl = on" "ssl_cert_file = '$dir/tls/server.pem'" "ssl_key_file = '$dir/tls/server.key'" \
            >>"$dir/data/postgresql.conf"
        # TLS only: a TCP connection without it is rejected (the first matching line wins).
        { echo "hostnossl all all all reject"; cat "$dir/data/pg_hba.conf"; } >"$dir/data/pg_hba.new"
        mv "$dir/data/pg_hba.new" "$dir/data/pg_hba.conf"
        chown postgres "$dir/data/pg_hba.conf"
    fi
    addresses=127.0.0.1
    if [ "$command" = start-tls ]; then addresses=127.0.0.1,127.0.0.2; fi
    runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-p $port -k $dir -c listen_addresses=$addresses -c max_connections=200" start >/dev/null
    if [ "$command" = start-tls ]; then
        echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=verify-full&sslrootcert=$dir/tls/ca.pem"
    else
        echo "postgres://postgres@127.0.0.1:$port/postgres"
    fi
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
