#!/usr/bin/env bash
# The live board behind a real reverse proxy: Debian's nginx, running deploy/nginx.conf as shipped (only
# its ports, upstream port and certificate paths swapped, each swap checked), terminating TLS on a
# self-signed certificate made here with openssl, in front of live-server. Tests/proxy_test.py then checks
# the page over TLS, the Origin check through the proxy, the client address taken from X-Forwarded-For
# only when the peer is a trusted proxy, and runs browser_test.py's checks with the tabs on nginx's https
# address (chromium with --ignore-certificate-errors). See proxy_test.py for the checks.
#
#   bash Examples/LiveServer/Tests/proxy-test.sh                        # builds live-server (debug) first
#   LIVE_SERVER=/path/to/live-server bash ...                           # uses that binary, builds nothing
#
# Needs Debian's nginx, openssl, chromium and python3 (standard library only). nginx runs as a process of
# this script, in a temporary folder of its own (its configuration, certificate, logs and pid file), and
# is stopped when the script ends. Exits 0 only when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in nginx openssl chromium python3; do
    command -v "$tool" >/dev/null || { echo "proxy-test: $tool is not installed (apt-get install -y --no-install-recommends $tool)"; exit 1; }
done
server=$(bash Tests/live-server-path.sh)

work=$(mktemp -d /tmp/live-proxy.XXXXXX)
chmod 755 "$work"   # nginx's workers (not root) read and write under it
nginx_pid=""
cleanup() {
    if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Three free loopback ports: the board's, nginx's TLS one and its plain HTTP one.
read -r board_port https_port http_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$work/privkey.pem" -out "$work/fullchain.pem" 2>/dev/null

# The shipped site file with this run's ports and certificate; each line swapped must be found once.
site="$work/site.conf"
cp deploy/nginx.conf "$site"
swap() {  # swap LINE REPLACEMENT: the line, trimmed, must occur exactly once
    local count
    count=$(grep -cxF "    $1" "$site" || true)
    [ "$count" = 1 ] || { echo "proxy-test: deploy/nginx.conf holds \"$1\" $count times, not once"; exit 1; }
    LINE="    $1" NEW="$2" python3 -c '
import os, sys
path = sys.argv[1]
text = open(path).read().split("\n")
open(path, "w").write("\n".join(os.environ["NEW"] if line == os.environ["LINE"] else line for line in text))' "$site"
}
swap "listen 80;" "    listen 127.0.0.1:$http_port;"
swap "listen [::]:80;" ""
swap "listen 443 ssl;" "    listen 127.0.0.1:$https_port ssl;"
swap "listen [::]:443 ssl;" ""
swap "server 127.0.0.1:8080;    # live-server --host 127.0.0.1 --port 8080" "    server 127.0.0.1:$board_port;"
swap "ssl_certificate     /etc/ssl/board/fullchain.pem;" "    ssl_certificate     $work/fullchain.pem;"
swap "ssl_certificate_key /etc/ssl/board/privkey.pem;" "    ssl_certificate_key $work/privkey.pem;"

mkdir -p "$work/temp"
cat > "$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/error.log;
worker_processes 1;
events { worker_connections 256; }
http {
    access_log $work/access.log;
    client_body_temp_path $work/temp/body;
    proxy_temp_path $work/temp/proxy;
    fastcgi_temp_path $work/temp/fastcgi;
    uwsgi_temp_path $work/temp/uwsgi;
    scgi_temp_path $work/temp/scgi;
    include $site;
}
CONF
nginx -q -t -p "$work" -e "$work/error.log" -c "$work/nginx.conf"
nginx -p "$work" -e "$work/error.log" -c "$work/nginx.conf"
for _ in $(seq 50); do [ -s "$work/nginx.pid" ] && break; sleep 0.1; done
nginx_pid=$(cat "$work/nginx.pid")
echo "proxy-test: nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') (pid $nginx_pid) on https://127.0.0.1:$https_port/ and http://127.0.0.1:$http_port/, the board on 127.0.0.1:$board_port"

status=0
timeout --kill-after=10 600 python3 Tests/proxy_test.py --server "$server" --board-port "$board_port" \
    --https-port "$https_port" --http-port "$http_port" --certificate "$work/fullchain.pem" || status=$?
if [ "$status" = 0 ]; then
    # The tabs' WebSockets went through nginx: its access log holds their upgrades (101).
    upgrades=$(grep -c '"GET /live?team=[a-z]* HTTP/1.1" 101 ' "$work/access.log" || true)
    if [ "$upgrades" -lt 4 ]; then
        echo "proxy-test: FAIL nginx's access log shows $upgrades WebSocket upgrades, not the browser test's"
        status=1
    else
        echo "proxy-test: ok   nginx's access log shows $upgrades WebSocket upgrades (101) to /live"
    fi
fi
if [ "$status" != 0 ]; then
    echo "proxy-test: nginx's error log:"
    sed 's/^/  | /' "$work/error.log" | tail -n 30
fi
exit "$status"
