#!/usr/bin/env python3
"""The live board behind nginx (python3 standard library only; called by proxy-test.sh, which starts
nginx with deploy/nginx.conf in front of the board's port).

Checks, in order (a failure stops the run), each through nginx over TLS, the certificate verified:

  page over TLS     GET / answers 200 with the page and its Content-Security-Policy; plain HTTP answers
                    301 to https
  origin check      an upgrade whose Origin is the proxy's own (https://127.0.0.1:PORT, as a page the
                    proxy served sends it) is upgraded (101); one from https://evil.example is refused
                    with 403 and the board's reason; one from the name given with --origin is upgraded
  operations        /healthz and /readyz answer 200 and /metrics the Prometheus text on the board's own
                    port; all three answer 404 through nginx (deploy/nginx.conf keeps them from the public)
  client address    with --trusted-proxy 127.0.0.1: a client connecting to nginx from 127.0.0.2 and
                    sending a forged X-Forwarded-For is logged (its refused token) as 127.0.0.2, the
                    address nginx appended, not the forged one; a client connecting to the board directly
                    from 127.0.0.3 with a forged X-Forwarded-For is logged as 127.0.0.3; without
                    --trusted-proxy, a client through nginx is logged as nginx's address, 127.0.0.1
  browser           browser_test.py's checks with the tabs on https://127.0.0.1:PORT (nginx), chromium
                    given --ignore-certificate-errors for the self-signed certificate

Prints `proxy-test: ok …` per check and browser_test.py's lines; exits 0 only when every check passed.
"""
import argparse
import json
import os
import shutil
import socket
import ssl
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_test  # noqa: E402
from browser_test import ALPHA_TOKEN, BETA_TOKEN, Failed, Server, WebSocketClient, WebSocketClosed, expect  # noqa: E402

FORGED = "198.51.100.9"


def connect(port, source="127.0.0.1", tls=None):
    """A TCP connection to 127.0.0.1:port from the loopback address `source`, TLS-wrapped with `tls`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return tls.wrap_socket(sock, server_hostname="127.0.0.1") if tls else sock


def exchange(sock, request):
    """Sends `request` and reads one answer (its head, then Content-Length bytes, or up to the close):
    (status, headers, body)."""
    sock.sendall(request.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "-1"))
    while length < 0 or len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    sock.close()
    return int(lines[0].split()[1]), headers, body.decode("utf-8", "replace")


def upgrade(port, origin=None, forwarded=None, source="127.0.0.1", tls=None):
    """A WebSocket client upgraded at /live?team=alpha, with `origin` and `forwarded` (X-Forwarded-For)."""
    headers = {}
    if origin:
        headers["Origin"] = origin
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    return WebSocketClient("127.0.0.1", port, "/live?team=alpha", headers=headers, sock=connect(port, source, tls))


def refused_upgrade(port, origin, tls):
    """The answer to a WebSocket upgrade with `origin` that is not upgraded: (status, headers, body)."""
    return exchange(connect(port, tls=tls), (
        f"GET /live?team=alpha HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n"))


class ProxyRun:
    def __init__(self, options):
        self.options = options
        self.tls = ssl.create_default_context(cafile=options.certificate)  # the self-signed certificate
        self.own = f"https://127.0.0.1:{options.https_port}"
        self.alias = f"https://board-alias.test:{options.https_port}"
        self.data = tempfile.mkdtemp(prefix="live-board-proxy-data-")
        self.server = None

    def start(self, trusted):
        arguments = ["--team", f"alpha={ALPHA_TOKEN}", "--team", f"beta={BETA_TOKEN}", "--origin", self.alias]
        if trusted:
            arguments += ["--trusted-proxy", "127.0.0.1"]
        self.server = Server(self.options.server, self.options.board_port, self.data, arguments)
        self.server.start()

    def stop(self):
        took = self.server.stop()
        expect(took is not None, "the server did not stop within 10 s of SIGTERM")

    def check_page(self):
        status, headers, body = exchange(connect(self.options.https_port, tls=self.tls),
                                         "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        expect(status == 200 and "<html" in body.lower(), f"GET / through nginx: {status} {body[:200]!r}")
        expect("connect-src 'self'" in headers.get("content-security-policy", ""),
               f"GET / through nginx: no Content-Security-Policy: {headers}")
        status, headers, _ = exchange(connect(self.options.http_port),
                                      "GET /?team=alpha HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        expect(status == 301 and headers.get("location", "").startswith("https://"),
               f"plain HTTP: {status}, location {headers.get('location')!r}")

    def check_operations(self):
        """/metrics, /healthz and /readyz answer on the board's own port, and 404 through the proxy."""
        for path, expected in (("/healthz", "ok\n"), ("/readyz", "ready\n")):
            status, _, body = exchange(connect(self.options.board_port),
                                       f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            expect(status == 200 and body == expected, f"GET {path} from the board: {status} {body!r}")
        status, _, body = exchange(connect(self.options.board_port),
                                   "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        expect(status == 200 and "# TYPE stillwater_live_connections gauge" in body, f"GET /metrics from the board: {status}")
        for path in ("/metrics", "/healthz", "/readyz"):
            status, _, _ = exchange(connect(self.options.https_port, tls=self.tls),
                                    f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            expect(status == 404, f"GET {path} through nginx: {status}, not 404")

    def check_origins(self):
        for origin in (self.own, self.alias):
            try:
                upgrade(self.options.https_port, origin=origin, tls=self.tls).close()
            except ConnectionError as refusal:
                raise Failed(f"the upgrade with Origin {origin} was refused: {refusal}") from None
        status, _, body = refused_upgrade(self.options.https_port, "https://evil.example", self.tls)
        expect(status == 403 and body == "pages from this origin may not use this server\n",
               f"the upgrade with Origin https://evil.example: {status} {body!r}")

    def refused_as(self, port, source, tls, address):
        """A client from `source` presents a wrong token; the board's log names it as `address`."""
        origin = self.own if tls else None
        client = upgrade(port, origin=origin, forwarded=FORGED, source=source, tls=tls)
        client.send_text(json.dumps({"type": "hello", "protocol": 1, "token": "not-the-alpha-token"}))
        frame = json.loads(client.receive(10))
        expect(frame.get("code") == "unauthorized", f"a wrong token was answered {frame}")
        try:
            client.receive(10)
        except WebSocketClosed:
            pass
        client.close()
        line = f"live-server: team alpha: a token was refused (client {address})"
        deadline = time.monotonic() + 5
        while line not in self.server.output:
            if time.monotonic() > deadline:
                logged = [entry for entry in self.server.output if "refused" in entry]
                raise Failed(f"a client from {source} (X-Forwarded-For: {FORGED}) was not logged as {address}: {logged}")
            time.sleep(0.05)

    def check_addresses(self):
        self.refused_as(self.options.https_port, "127.0.0.2", self.tls, "127.0.0.2")
        self.refused_as(self.options.board_port, "127.0.0.3", None, "127.0.0.3")
        expect(not any(FORGED in entry for entry in self.server.output), "the forged address was logged")
        self.stop()
        self.start(trusted=False)
        self.refused_as(self.options.https_port, "127.0.0.2", self.tls, "127.0.0.1")
        self.stop()

    def run(self):
        checks = [("page over TLS, plain HTTP redirected", self.check_page),
                  ("origin check through the proxy", self.check_origins),
                  ("/metrics, /healthz, /readyz on the board's port only", self.check_operations),
                  ("client address from X-Forwarded-For of a trusted proxy only", self.check_addresses)]
        self.start(trusted=True)
        try:
            for name, check in checks:
                started = time.monotonic()
                try:
                    check()
                except Exception as error:
                    print(f"proxy-test: FAIL {name}: {error}")
                    print("proxy-test: the server's last output:\n  | " + "\n  | ".join(self.server.output))
                    return False
                print(f"proxy-test: ok   {name} ({time.monotonic() - started:.1f} s)")
        finally:
            self.server.kill()
            shutil.rmtree(self.data, ignore_errors=True)
        return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="the live-server executable")
    parser.add_argument("--board-port", type=int, required=True, help="the port nginx proxies to")
    parser.add_argument("--https-port", type=int, required=True, help="nginx's TLS port")
    parser.add_argument("--http-port", type=int, required=True, help="nginx's plain HTTP port")
    parser.add_argument("--certificate", required=True, help="nginx's self-signed certificate (PEM)")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--timeout", type=int, default=300, help="the browser checks' limit in seconds")
    options = parser.parse_args()
    if not ProxyRun(options).run():
        sys.exit(1)
    # The browser test, its tabs on nginx's address; the board behind it trusts it as above.
    options.docs = None
    options.port = options.board_port
    options.base = f"https://127.0.0.1:{options.https_port}"
    options.server_arguments = ["--trusted-proxy", "127.0.0.1"]
    options.chromium_flags = ["--ignore-certificate-errors"]
    browser_test.run_checks(options)


if __name__ == "__main__":
    main()
