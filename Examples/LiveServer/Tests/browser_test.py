#!/usr/bin/env python3
"""Browser test of the live board (python3 standard library only; called by browser-test.sh).

Starts live-server with two teams, drives headless Chromium through the DevTools protocol (a WebSocket
client written here on the socket module) and uses the page as a person would: typing, Enter and
Escape, mouse clicks on the buttons. Checks, in order (a failure stops the run):

  page logic        node runs Tests/page-logic.test.js (skipped when node is missing)
  two tabs          tab A adds two items and ticks one, tab B renames one inline (and cancels another
                    rename with Escape) and moves one up; both end on the same version and rows, and
                    the rows already on screen were patched in place, never rebuilt
  server stop       SIGTERM stops the server within 5 s; both tabs show reconnecting
  offline queue     an item added in tab A while the server is down is queued (1 waiting), the input
                    cleared, and kept with its cid in the tab's session storage ("Try now" starts a new
                    client that reads it back); after a restart on the same port and data both tabs reconnect, converge,
                    and show the item exactly once, with nothing left waiting
  fresh tab         a third tab at /?team=alpha (token from storage, no fragment) gets the same board
  member and viewer tabs A, B and C close; a member tab (named Ann through the name form) offers the
                    read-only link, which a viewer tab (named Vic, in a browser context of its own) opens:
                    the viewer's page shows the board without who added each item (the member's shows
                    "added by Ann"), no add form, row buttons or editable boxes, and its badge says
                    viewer; both pages list the two people present, and the member's drops Vic when the
                    viewer's tab closes
  refused token     a wrong token (error `unauthorized`, close 4401 after the hello) shows the refusal,
                    forgets the token and stops reconnecting (an unknown team is refused the same
                    way); pasting the right share link into the form opens team beta's board, which
                    alpha's items are not on
  title and layout  inline title edit (Enter saves, Escape cancels); at 390 px wide nothing overflows
                    and every button and checkbox is at least 40 px square
  screenshots       Page.captureScreenshot at 1280x800 and 390x844 (Docs/desktop.png and Docs/phone.png
                    with --docs, else a temporary folder)

Prints `browser-test: N passed, M failed` last; exits 0 only when every check passed.
"""
import argparse
import base64
import collections
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA_TOKEN = "token-alpha-test-0001"


def viewer_token(member_token):
    """A team's viewer token, as the server derives it from its token's digest (ViewerTokens)."""
    digest = hashlib.sha256(member_token.encode()).hexdigest()
    return "view-" + hashlib.sha256(("stillwater-board viewer token " + digest).encode()).hexdigest()


BETA_TOKEN = "token-beta-test-0002"


class Failed(Exception):
    """A check failed; the message says what differed."""


# ---------------------------------------------------------------------------------------------------
# A WebSocket client (RFC 6455), enough for the DevTools protocol: masked text frames out; text,
# continuation, ping and close frames in, of any length.

class WebSocketClosed(Exception):
    pass


class WebSocketClient:
    def __init__(self, host, port, path, timeout=10, headers=None, sock=None):
        """Connects (or upgrades `sock`, already connected: a TLS one, say), sending `headers` too."""
        self.sock = sock or socket.create_connection((host, port), timeout=timeout)
        self.buffer = bytearray()
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n")
        self.sock.sendall(request.encode())
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
        head, _, rest = bytes(self.buffer).partition(b"\r\n\r\n")
        self.buffer = bytearray(rest)
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            raise ConnectionError("WebSocket handshake refused: " + lines[0])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        expected = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != expected:
            raise ConnectionError("WebSocket handshake: wrong Sec-WebSocket-Accept")

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("WebSocket read timed out")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise TimeoutError("WebSocket read timed out") from None
        if not chunk:
            raise WebSocketClosed("connection closed")
        self.buffer += chunk

    def _take(self, count, deadline):
        while len(self.buffer) < count:
            self._fill(deadline)
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    def _send_frame(self, opcode, payload):
        header = bytearray([0x80 | opcode])
        length = len(payload)
        if length < 126:
            header.append(0x80 | length)
        elif length < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", length)
        mask = os.urandom(4)
        repeated = (mask * (length // 4 + 1))[:length]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(length, "big") if length else b""
        self.sock.sendall(bytes(header) + mask + masked)

    def send_text(self, text):
        self._send_frame(0x1, text.encode())

    def receive(self, timeout):
        """The next whole text message (fragments joined); raises TimeoutError or WebSocketClosed."""
        deadline = time.monotonic() + timeout
        fragments = []
        while True:
            first, second = self._take(2, deadline)
            fin, opcode = first & 0x80, first & 0x0F
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._take(2, deadline))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._take(8, deadline))[0]
            mask = self._take(4, deadline) if second & 0x80 else None
            payload = self._take(length, deadline)
            if mask:
                payload = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise WebSocketClosed("closed by the peer")
            if opcode == 0x9:
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            fragments.append(payload)
            if fin:
                return b"".join(fragments).decode()

    def close(self):
        try:
            self._send_frame(0x8, struct.pack(">H", 1000))
        except OSError:
            pass
        self.sock.close()


# ---------------------------------------------------------------------------------------------------
# The DevTools protocol over one browser connection, with flattened sessions for the tabs.

class DevTools:
    def __init__(self, port, path):
        self.ws = WebSocketClient("127.0.0.1", port, path)
        self.next_id = 0
        self.problems = collections.defaultdict(lambda: collections.deque(maxlen=30))  # session -> messages

    def call(self, method, params=None, session=None, timeout=20):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send_text(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failed(f"DevTools: no answer to {method} within {timeout} s")
            reply = json.loads(self.ws.receive(remaining))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise Failed(f"DevTools: {method} failed: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _event(self, event):
        method, params, session = event.get("method"), event.get("params", {}), event.get("sessionId")
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.problems[session].append("exception: " + str(text))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.problems[session].append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.problems[session].append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Inspector.targetCrashed":
            self.problems[session].append("the tab crashed")


class Tab:
    """One page, driven like a person would: clicks at the element's centre, typed text, keys."""

    def __init__(self, devtools, name, url, context=None):
        """`context`: a browser context id (its own storage, as another person's browser), else the default."""
        self.devtools, self.name = devtools, name
        target = {"url": "about:blank", "newWindow": True}
        if context:
            target["browserContextId"] = context
        self.target = devtools.call("Target.createTarget", target)["targetId"]
        self.session = devtools.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        for method in ("Runtime.enable", "Page.enable", "Log.enable"):
            self.call(method)
        self.call("Emulation.setFocusEmulationEnabled", {"enabled": True})
        self.call("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-reduced-motion", "value": "reduce"}, {"name": "prefers-color-scheme", "value": "light"}]})
        self.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": url})

    def call(self, method, params=None, timeout=20):
        return self.devtools.call(method, params, session=self.session, timeout=timeout)

    def eval(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise Failed(f"tab {self.name}: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def wait(self, expression, what, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise Failed(f"tab {self.name}: {what} did not happen within {timeout} s; the tab shows {json.dumps(self.state())}")
            time.sleep(0.1)

    def state(self):
        return self.eval(STATE_JS)

    def click(self, selector):
        spot = self.eval(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return null;
            el.scrollIntoView({{block: "center", inline: "center"}});
            const r = el.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const hit = document.elementFromPoint(x, y);
            return {{x, y, hits: !!hit && (hit === el || el.contains(hit) || hit.contains(el)),
                     hit: hit ? hit.outerHTML.slice(0, 120) : null}};
        }})()""")
        if not spot:
            raise Failed(f"tab {self.name}: nothing matches {selector}")
        if not spot["hits"]:
            raise Failed(f"tab {self.name}: {selector} is covered by {spot['hit']}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": spot["x"], "y": spot["y"], "button": "left",
                                                   "buttons": 1 if kind == "mousePressed" else 0, "clickCount": 1})

    def type(self, text):
        self.call("Input.insertText", {"text": text})

    def press(self, key):
        codes = {"Enter": (13, "\r"), "Escape": (27, "")}
        code, text = codes[key]
        down = {"type": "keyDown" if text else "rawKeyDown", "key": key, "code": key,
                "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
        if text:
            down.update(text=text, unmodifiedText=text)
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key,
                                             "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code})

    def focused(self, selector):
        return self.eval(f"document.activeElement === document.querySelector({json.dumps(selector)})")

    def problems(self):
        return list(self.devtools.problems.get(self.session, []))

    def close(self):
        try:
            self.devtools.call("Target.closeTarget", {"targetId": self.target}, timeout=5)
        except Exception:
            pass


# What a tab shows, read from the page's stable hooks.
STATE_JS = r"""(() => {
  const q = (s) => document.querySelector(s);
  return {
    state: q("#status") && q("#status").dataset.state,
    version: q("#items") ? Number(q("#items").dataset.version) : null,
    queued: q("#queued") ? Number(q("#queued").dataset.count) : null,
    title: q("#title-text") && q("#title-text").textContent,
    rows: [...document.querySelectorAll("#items > li[data-id]")].map((li) => ({
      id: li.dataset.id, text: li.querySelector(".text").textContent, done: li.dataset.done === "true" })),
    waiting: [...document.querySelectorAll("#pending-list > li")].map((li) => li.querySelector(".text").textContent),
    banner: q("#banner") && !q("#banner").hidden ? q("#banner-text").textContent : null,
    gate: q("#gate") ? !q("#gate").hidden : null,
    gateMessage: q("#gate-message") && q("#gate-message").textContent,
    href: location.href,
  };
})()"""


# At phone width: how far the page overflows, the visible controls smaller than 40 px, the items' text size.
LAYOUT_JS = r"""(() => {
  const small = [...document.querySelectorAll("button, .check, #new-text, #token-input, summary")].filter((el) => {
    if (!el.offsetParent) return false;  // not shown
    const r = el.getBoundingClientRect();
    return r.width < 40 || r.height < 40;
  }).map((el) => el.outerHTML.slice(0, 80));
  const text = document.querySelector("#items .text");
  return { overflow: document.documentElement.scrollWidth - innerWidth, small,
           font: text ? parseFloat(getComputedStyle(text).fontSize) : 16 };
})()"""


def row_selector(tab, text, part=""):
    """The selector of the row showing `text` (waits for it), plus `part` inside it."""
    row_id = tab.wait(f"""(() => {{
        const li = [...document.querySelectorAll("#items > li[data-id]")]
            .find((li) => li.querySelector(".text").textContent === {json.dumps(text)});
        return li ? li.dataset.id : null; }})()""", f"a row reading {text!r}")
    return f'#items > li[data-id="{row_id}"] {part}'.strip()


# The people a tab lists as present, in its order.
PRESENT_JS = "[...document.querySelectorAll('#present > li')].map((li) => li.textContent)"
# What the row showing a text says about who added it (null when there is no such row).
ROW_BY_JS = """((text) => {
    const li = [...document.querySelectorAll("#items > li[data-id]")].find((li) => li.querySelector(".text").textContent === text);
    return li ? li.querySelector(".by").textContent : null; })"""


def set_name(tab, name):
    """Gives the tab's person a name through the name form (the page reconnects with it)."""
    tab.wait("!!document.querySelector('#you')?.offsetParent", "the name badge", timeout=10)
    tab.click("#you")
    tab.wait("document.activeElement === document.querySelector('#name-input')", "the name field taking focus", timeout=5)
    tab.type(name)
    tab.press("Enter")
    tab.wait("document.querySelector('#status').dataset.state === 'connected'", "reconnecting under the new name", timeout=20)


def add_item(tab, text):
    tab.click("#new-text")
    tab.type(text)
    tab.press("Enter")
    tab.wait("document.querySelector('#new-text').value === ''", f"clearing the input after adding {text!r}", timeout=5)


def rename_inline(tab, old, new, by_text=False):
    row = row_selector(tab, old)
    tab.click(row + (" .text" if by_text else " .rename"))
    tab.wait(f"document.activeElement === document.querySelector({json.dumps(row + ' .edit input')})",
             f"the rename field of {old!r} taking focus", timeout=5)
    if tab.eval(f"document.querySelector({json.dumps(row + ' .edit input')}).value") != old:
        raise Failed(f"tab {tab.name}: the rename field does not start with {old!r}")
    tab.type(new)  # the field's text is selected: typing replaces it
    return row


# ---------------------------------------------------------------------------------------------------
# The server and the browser as child processes.

class Server:
    def __init__(self, binary, port, data, arguments=None):
        """`arguments` replace the default teams (alpha and beta) when given."""
        self.binary, self.port, self.data = binary, port, data
        self.arguments = arguments if arguments is not None else [
            "--team", f"alpha={ALPHA_TOKEN}", "--team", f"beta={BETA_TOKEN}"]
        self.output = collections.deque(maxlen=100)
        self.process = None

    def start(self, timeout=30):
        env = dict(os.environ, SWIFT_BACKTRACE="enable=yes,interactive=no,color=no")
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--data", self.data] + self.arguments,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True)
        listening = threading.Event()

        def read(stream):
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.output.append(line)
                if line.startswith("live-server: listening on http://"):
                    listening.set()
        threading.Thread(target=read, args=(self.process.stdout,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not listening.wait(0.1):
            if self.process.poll() is not None:
                raise Failed(f"the server exited with status {self.process.returncode} before listening")
            if time.monotonic() > deadline:
                raise Failed(f"the server printed no 'live-server: listening on http://' line within {timeout} s")

    def stop(self):
        """SIGTERM; returns the seconds it took to exit (None when it had to be killed after 10 s)."""
        if not self.process or self.process.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
            return time.monotonic() - started
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


class Browser:
    def __init__(self, executable, flags=()):
        self.profile = tempfile.mkdtemp(prefix="live-board-chromium-")
        self.process = subprocess.Popen(
            [executable, *flags, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check",
             "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
             "--disable-backgrounding-occluded-windows", "--disable-extensions", "--hide-scrollbars",
             "--mute-audio", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
        self.devtools = None
        try:
            self.devtools = DevTools(*self._devtools_address())
        except BaseException:
            self.close()  # the caller never gets this object, so nothing else would stop chromium
            raise

    def _devtools_address(self):
        active = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise Failed(f"chromium exited with status {self.process.returncode} at start")
            if time.monotonic() > deadline:
                raise Failed("chromium wrote no DevToolsActivePort within 30 s")
            try:
                with open(active) as file:
                    lines = file.read().split("\n")
                if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].startswith("/devtools/browser/"):
                    return int(lines[0]), lines[1].strip()
            except FileNotFoundError:
                pass
            time.sleep(0.1)

    def close(self):
        if self.devtools:
            try:
                self.devtools.ws.close()
            except Exception:
                pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(5)
        shutil.rmtree(self.profile, ignore_errors=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------------------------------------------
# The scenario.

def converged(tabs, what, timeout=20):
    """Waits until every tab is connected with nothing waiting and the same version, title and rows."""
    deadline = time.monotonic() + timeout
    while True:
        states = [tab.state() for tab in tabs]
        first = states[0]
        if all(s["state"] == "connected" and s["queued"] == 0 and not s["waiting"] and s["version"] >= 0
               and (s["version"], s["title"], s["rows"]) == (first["version"], first["title"], first["rows"])
               for s in states):
            return first
        if time.monotonic() > deadline:
            shown = "\n".join(f"  tab {tab.name}: {json.dumps(s)}" for tab, s in zip(tabs, states))
            raise Failed(f"{what}: the tabs did not converge within {timeout} s:\n{shown}")
        time.sleep(0.1)


def expect(condition, message):
    if not condition:
        raise Failed(message)


MARK_ROWS = "window.__rows = new Set(document.querySelectorAll('#items > li[data-id]')); window.__rows.size"
# Rows marked earlier that are still on screen but are other elements now: a rebuild.
REBUILT_ROWS = """[...(window.__rows || [])].filter((old) => {
    const now = document.querySelector('#items > li[data-id="' + old.dataset.id + '"]');
    return now && now !== old; }).map((old) => old.dataset.id)"""


class Run:
    def __init__(self, options):
        self.options = options
        self.port = options.port or free_port()
        self.data = tempfile.mkdtemp(prefix="live-board-data-")
        self.server = Server(options.server, self.port, self.data, None if not options.server_arguments else
                             ["--team", f"alpha={ALPHA_TOKEN}", "--team", f"beta={BETA_TOKEN}"] + options.server_arguments)
        # The address the tabs open: the server's own, or a proxy's in front of it (--base).
        self.base = options.base or f"http://127.0.0.1:{self.port}"
        self.browser = None
        self.tabs = {}
        self.nodes = []

    def open(self, name, url, context=None):
        tab = Tab(self.browser.devtools, name, url, context)
        self.tabs[name] = tab
        return tab

    def check_page_logic(self):
        node = shutil.which("node")
        if not node:
            print("browser-test:   (node is not installed: the page logic check is skipped)")
            return
        result = subprocess.run([node, os.path.join(HERE, "page-logic.test.js")], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise Failed("node Tests/page-logic.test.js failed:\n" + result.stdout + result.stderr)

    def check_two_tabs(self):
        self.server.start()
        self.browser = Browser(self.options.chromium, self.options.chromium_flags)
        link = f"{self.base}/?team=alpha#token={ALPHA_TOKEN}"
        a, b = self.open("A", link), self.open("B", link)
        for tab in (a, b):
            tab.wait("document.querySelector('#status')?.dataset.state === 'connected'", "connecting", timeout=20)
            href = tab.eval("location.href")
            expect(href == f"{self.base}/?team=alpha", f"tab {tab.name}: the address still holds the fragment: {href}")
            stored = tab.eval("localStorage.getItem('stillwater.token.alpha')")
            expect(stored == ALPHA_TOKEN, f"tab {tab.name}: localStorage holds {stored!r}, not the token")
        start = converged([a, b], "at the start")

        add_item(a, "Write the agenda")
        add_item(a, "Book the room")
        for tab in (a, b):
            row_selector(tab, "Write the agenda")
            row_selector(tab, "Book the room")
        for tab in (a, b):
            tab.eval(MARK_ROWS)
        a.click(row_selector(a, "Book the room", ".check input"))
        b.wait(f"document.querySelector({json.dumps(row_selector(b, 'Book the room'))}).dataset.done === 'true'",
               "seeing the tick from tab A")

        # Escape leaves a rename without sending anything.
        rename_inline(b, "Book the room", "Not this name", by_text=True)
        b.press("Escape")
        b.wait("!document.querySelector('#items .edit')", "closing the rename field on Escape", timeout=5)
        expect(b.state()["queued"] == 0, "tab B: Escape queued a rename")
        row_selector(b, "Book the room")

        rename_inline(b, "Write the agenda", "Write the agenda for Monday")
        b.press("Enter")
        row_selector(b, "Write the agenda for Monday")
        b.click(row_selector(b, "Book the room", ".up"))

        def moved(tab):
            texts = [r["text"] for r in tab.state()["rows"]]
            return texts.index("Book the room") < texts.index("Write the agenda for Monday")
        deadline = time.monotonic() + 15
        while not moved(b):
            if time.monotonic() > deadline:
                raise Failed(f"tab B: the move up did not show: {json.dumps(b.state())}")
            time.sleep(0.1)

        end = converged([a, b], "after the edits")
        texts = [r["text"] for r in end["rows"]]
        expect(texts.count("Write the agenda for Monday") == 1 and texts.count("Book the room") == 1
               and "Write the agenda" not in texts, f"unexpected rows: {texts}")
        done = {r["text"]: r["done"] for r in end["rows"]}
        expect(done["Book the room"] and not done["Write the agenda for Monday"], f"unexpected ticks: {end['rows']}")
        expect(moved(a), f"tab A: 'Book the room' is not above the renamed item: {texts}")
        # add, add, toggle, rename, move: five visible changes.
        expect(end["version"] >= start["version"] + 5, f"version {end['version']} after 5 changes from {start['version']}")
        for tab in (a, b):
            rebuilt = tab.eval(REBUILT_ROWS)
            expect(not rebuilt, f"tab {tab.name}: the patches rebuilt rows {rebuilt} instead of patching them")
        self.before_stop = end

    def check_server_stop(self):
        a, b = self.tabs["A"], self.tabs["B"]
        took = self.server.stop()
        expect(took is not None and took <= 5, f"the server took {took if took is not None else 'over 10'} s to exit after SIGTERM")
        print(f"browser-test:   (the server exited {took:.2f} s after SIGTERM)")
        for tab in (a, b):
            tab.wait("document.querySelector('#status').dataset.state === 'reconnecting'", "showing reconnecting", timeout=10)

    def check_offline_queue(self):
        a, b = self.tabs["A"], self.tabs["B"]
        add_item(a, "Queued while offline")
        state = a.state()
        expect(state["queued"] == 1, f"tab A: {state['queued']} commands queued, expected 1")
        expect(state["waiting"] == ["Queued while offline"], f"tab A: waiting rows {state['waiting']}")
        expect(a.eval("!document.querySelector('#queued').hidden && document.querySelector('#queued').textContent")
               == "1 change waiting", "tab A: the waiting count is not shown")
        expect(b.state()["queued"] == 0, "tab B: something is queued")
        self.check_layout(a, "reconnecting, one change waiting")
        # The queue is in the tab's session storage (what a reload reads back): the client's id, its next
        # number, and the command with its number (seq) under that id.
        saved = json.loads(a.eval("sessionStorage.getItem('stillwater.queue.alpha') || 'null'"))
        queue = saved.get("queue") if isinstance(saved, dict) else None
        expect(isinstance(saved, dict) and isinstance(saved.get("client"), str) and saved["client"].startswith("c")
               and isinstance(queue, list) and len(queue) == 1
               and queue[0].get("command") == {"add": {"text": "Queued while offline"}}
               and isinstance(queue[0].get("seq"), int) and queue[0]["seq"] >= 1 and saved.get("next") == queue[0]["seq"] + 1,
               f"tab A: the stored queue is {saved!r}")
        # "Try now" asks the client to connect at once (the server is still down, so it waits again): the
        # change is still shown waiting, once.
        a.click("#retry-now")
        time.sleep(0.5)
        state = a.state()
        expect(state["state"] == "reconnecting" and state["queued"] == 1 and state["waiting"] == ["Queued while offline"],
               f"tab A after 'Try now': {json.dumps(state)}")
        time.sleep(1.5)  # a few reconnection attempts fail meanwhile
        self.server.start()
        end = converged([a, b], "after the restart", timeout=30)
        texts = [r["text"] for r in end["rows"]]
        expect(texts.count("Queued while offline") == 1, f"the queued item shows {texts.count('Queued while offline')} times: {texts}")
        before = self.before_stop
        expect(end["version"] == before["version"] + 1,
               f"version {end['version']} after the restart, expected {before['version'] + 1} (one add after {before['version']})")
        expect([r for r in end["rows"] if r["text"] != "Queued while offline"] == before["rows"],
               f"the board changed across the restart: {before['rows']} then {end['rows']}")
        kept = all(not tab.eval(REBUILT_ROWS) for tab in (a, b))
        print("browser-test:   (after the restart the tabs " + ("resumed with a patch: rows kept)" if kept else "were sent a snapshot)"))
        self.after_restart = end

    def check_fresh_tab(self):
        c = self.open("C", f"{self.base}/?team=alpha")
        c.wait("document.querySelector('#status')?.dataset.state === 'connected'", "connecting with the stored token", timeout=20)
        end = converged([self.tabs["A"], self.tabs["B"], c], "with a fresh tab")
        expect(end["rows"] == self.after_restart["rows"], "the fresh tab's board differs")

    def check_member_and_viewer(self):
        for name in ("A", "B", "C"):
            self.tabs.pop(name).close()
        link = f"{self.base}/?team=alpha#token={ALPHA_TOKEN}"
        viewer_link = f"{self.base}/?team=alpha#token={viewer_token(ALPHA_TOKEN)}"
        m = self.open("M", link)
        m.wait("document.querySelector('#status')?.dataset.state === 'connected'", "connecting", timeout=20)
        set_name(m, "Ann")
        m.wait("document.querySelector('#you').textContent === 'You: Ann · member'", "the member badge", timeout=10)
        shown = m.eval("document.querySelector('#viewer-share').hidden ? null : document.querySelector('#viewer-link').value")
        expect(shown == viewer_link, f"tab M: the read-only link is {shown!r}, expected {viewer_link!r}")
        # Another person's browser: storage of its own.
        context = self.browser.devtools.call("Target.createBrowserContext")["browserContextId"]
        v = self.open("V", shown, context)
        v.wait("document.querySelector('#status')?.dataset.state === 'connected'", "connecting with the viewer link", timeout=20)
        set_name(v, "Vic")
        v.wait("document.querySelector('#you').textContent === 'You: Vic · viewer'", "the viewer badge", timeout=10)
        for tab in (m, v):
            tab.wait(PRESENT_JS + ".join('|') === 'Ann|Vic (viewer)'", "listing Ann and Vic as present", timeout=15)
        add_item(m, "Added by a member")
        m.wait(f"{ROW_BY_JS}('Added by a member') === 'added by Ann'", "showing who added the item", timeout=10)
        v.wait(f"{ROW_BY_JS}('Added by a member') === ''", "the item, without who added it", timeout=10)
        converged([m, v], "a member and a viewer")
        seen = v.eval("""(() => ({
            names: document.querySelector('#items').textContent.includes('Ann'),
            by: [...document.querySelectorAll('#items .by')].map((el) => el.textContent).filter(Boolean),
            add: !!document.querySelector('#add-form').offsetParent,
            actions: [...document.querySelectorAll('#items .actions')].filter((el) => el.offsetParent).length,
            editable: [...document.querySelectorAll('#items .check input')].filter((el) => !el.disabled).length,
            viewerLink: !document.querySelector('#viewer-share').hidden,
        }))()""")
        expect(seen == {"names": False, "by": [], "add": False, "actions": 0, "editable": 0, "viewerLink": False},
               f"tab V shows what a viewer must not have: {json.dumps(seen)}")
        member = m.eval("[...document.querySelectorAll('#items .by')].map((el) => el.textContent).filter(Boolean)")
        # The items tabs A and B added earlier (under this browser's made-up name) say so too.
        expect(len(member) >= 2 and member[-1] == "added by Ann" and all(by.startswith("added by ") for by in member),
               f"tab M: the rows say who added them as {member}")
        # Clicking a viewer's row text opens no editor; its title is not editable.
        v.click(row_selector(v, "Added by a member", ".text"))
        v.click("#title-text")
        time.sleep(0.3)
        expect(v.eval("!document.querySelector('#items .edit') && document.querySelector('#title-form').hidden"),
               "tab V: a viewer's click opened an editor")
        self.tabs.pop("V").close()
        m.wait(PRESENT_JS + ".join('|') === 'Ann'", "dropping Vic once the viewer's tab closed", timeout=15)
        self.browser.devtools.call("Target.disposeBrowserContext", {"browserContextId": context})

    def check_refused(self):
        d = self.open("D", f"{self.base}/?team=beta#token=not-the-beta-token")
        d.wait("document.querySelector('#status')?.dataset.state === 'refused'", "showing the refusal", timeout=20)
        state = d.state()
        expect(state["gate"] and "The token was refused — open your team's share link again" in state["gateMessage"],
               f"tab D: the refusal message is not shown: {json.dumps(state)}")
        expect(state["href"] == f"{self.base}/?team=beta", f"tab D: the address still holds the fragment: {state['href']}")
        expect(d.eval("localStorage.getItem('stillwater.token.beta')") is None, "tab D: the refused token is kept")
        time.sleep(2)
        expect(d.state()["state"] == "refused", "tab D: the page left the refused state by itself")
        # A team the server does not know: its hello is answered `unauthorized` and the socket closed with
        # 4401, as for a wrong token.
        e = self.open("E", f"{self.base}/?team=gamma#token=any-token-at-all")
        e.wait("document.querySelector('#status')?.dataset.state === 'refused'", "refusing an unknown team", timeout=20)
        e.close()
        d.click("#token-input")
        d.type(f"{self.base}/?team=beta#token={BETA_TOKEN}")
        d.press("Enter")
        d.wait("document.querySelector('#status').dataset.state === 'connected'", "connecting with the pasted link", timeout=20)
        state = d.state()
        expect(not state["gate"], "tab D: the token form is still shown")
        beta = {r["text"] for r in state["rows"]}
        expect(not beta & {"Write the agenda for Monday", "Queued while offline"}, f"team beta's board shows alpha's items: {state['rows']}")
        expect(d.eval("localStorage.getItem('stillwater.token.beta')") == BETA_TOKEN, "tab D: the pasted token is not kept")

    def check_title_and_layout(self):
        d = self.tabs["D"]
        title = d.state()["title"]
        d.click("#title-text")
        d.wait("document.activeElement === document.querySelector('#title-input')", "the title field taking focus", timeout=5)
        d.type("Not this title")
        d.press("Escape")
        d.wait("document.querySelector('#title-form').hidden", "closing the title field on Escape", timeout=5)
        expect(d.state()["title"] == title and d.state()["queued"] == 0, "Escape changed the title")
        d.click("#title-edit")
        d.wait("document.activeElement === document.querySelector('#title-input')", "the title field taking focus", timeout=5)
        d.type("Demo day")
        d.press("Enter")
        for text in ("Bring the slides", "Test the projector", "Send the invitations"):
            add_item(d, text)
        d.click(row_selector(d, "Bring the slides", ".check input"))
        d.wait("document.querySelector('#title-text').textContent === 'Demo day'", "the new title", timeout=10)
        converged([d], "team beta")
        self.check_layout(d, "connected")

    def check_layout(self, tab, when):
        """At 390 px wide: nothing wider than the screen, tap targets of 40 px or more, text of 16 px or more."""
        self.call_phone(tab)
        layout = tab.eval(LAYOUT_JS)
        self.call_desktop(tab)
        expect(layout["overflow"] <= 0, f"tab {tab.name} ({when}): at 390 px the page is {layout['overflow']} px too wide")
        expect(not layout["small"], f"tab {tab.name} ({when}): tap targets under 40 px: {layout['small']}")
        expect(layout["font"] >= 16, f"tab {tab.name} ({when}): item text is {layout['font']} px")

    def call_phone(self, tab):
        tab.call("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        time.sleep(0.3)

    def call_desktop(self, tab):
        tab.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        time.sleep(0.3)

    def check_cluster(self):
        """Two nodes of a cluster on one PostgreSQL (LIVE_POSTGRES_URL), a tab on each: both edit and
        converge; node one is killed with SIGKILL and its tab, given both addresses, moves to node two,
        resumes, and sends what was typed meanwhile once."""
        url = os.environ.get("LIVE_POSTGRES_URL")
        if self.options.base:
            print("browser-test:   (through a proxy (--base): the cluster check is skipped)")
            return
        if not url:
            print("browser-test:   (LIVE_POSTGRES_URL is not set: the cluster check is skipped)")
            return
        team, token = f"web-{os.getpid()}-{int(time.time())}", "token-cluster-test-0003"
        ports = [free_port(), free_port()]
        origins = sum((["--origin", f"http://127.0.0.1:{port}"] for port in ports), [])
        for port in ports:
            node = Server(self.options.server, port, tempfile.mkdtemp(prefix="live-board-node-"),
                          ["--postgres", url, "--team", f"{team}={token}"] + origins)
            self.nodes.append(node)
            node.start()
        e = self.open("E", f"http://127.0.0.1:{ports[0]}/?team={team}&nodes=127.0.0.1:{ports[1]}#token={token}")
        f = self.open("F", f"http://127.0.0.1:{ports[1]}/?team={team}&nodes=127.0.0.1:{ports[0]}#token={token}")
        for tab in (e, f):
            tab.wait("document.querySelector('#status')?.dataset.state === 'connected'", "connecting", timeout=20)
        add_item(e, "Added on node one")
        add_item(f, "Added on node two")
        row_selector(f, "Added on node one")
        row_selector(e, "Added on node two")
        converged([e, f], "on two nodes")

        self.nodes[0].kill()
        e.wait("document.querySelector('#status')?.dataset.state !== 'connected'", "noticing node one is gone", timeout=15)
        add_item(e, "Typed while moving")
        e.wait("document.querySelector('#status')?.dataset.state === 'connected'", "reconnecting to node two", timeout=20)
        end = converged([e, f], "after node one was killed", timeout=30)
        texts = [r["text"] for r in end["rows"]]
        expect(texts.count("Typed while moving") == 1 and texts.count("Added on node one") == 1
               and texts.count("Added on node two") == 1, f"unexpected rows: {texts}")

    def check_screenshots(self):
        d = self.tabs["D"]
        folder = self.options.docs or tempfile.mkdtemp(prefix="live-board-shots-")
        os.makedirs(folder, exist_ok=True)
        d.eval("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); true")
        d.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1, "y": 1})  # no hover left on a button
        for name, size in (("desktop.png", None), ("phone.png", "phone")):
            if size:
                self.call_phone(d)
            else:
                self.call_desktop(d)
            shot = d.call("Page.captureScreenshot", {"format": "png"}, timeout=30)
            data = base64.b64decode(shot["data"])
            expect(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, f"{name}: not a screenshot")
            with open(os.path.join(folder, name), "wb") as file:
                file.write(data)
        self.call_desktop(d)
        print(f"browser-test:   (screenshots in {folder})")

    def run(self):
        checks = [
            ("page logic", self.check_page_logic),
            ("two tabs converge, patched in place", self.check_two_tabs),
            ("SIGTERM stops the server within 5 s", self.check_server_stop),
            ("offline queue survives a restart, applied once", self.check_offline_queue),
            ("a fresh tab gets the same board", self.check_fresh_tab),
            ("a member tab and a viewer tab: who added what, who is here", self.check_member_and_viewer),
            ("a refused token, then a pasted share link", self.check_refused),
            ("inline title edit, phone layout", self.check_title_and_layout),
            ("screenshots", self.check_screenshots),
            ("two tabs on two cluster nodes, one node killed", self.check_cluster),
        ]
        passed = failed = 0
        try:
            for index, (name, check) in enumerate(checks):
                started = time.monotonic()
                try:
                    check()
                except Exception as error:  # a check's failure, or the machinery's
                    failed += 1
                    message = str(error) if isinstance(error, Failed) else traceback.format_exc()
                    print(f"browser-test: FAIL {name}: {message}")
                    self.report(checks[index + 1:])
                    break
                passed += 1
                print(f"browser-test: ok   {name} ({time.monotonic() - started:.1f} s)")
        finally:
            self.cleanup()
        print(f"browser-test: {passed} passed, {failed} failed")
        return 0 if failed == 0 and passed == len(checks) else 1

    def report(self, skipped):
        if skipped:
            print("browser-test: not run: " + ", ".join(name for name, _ in skipped))
        for tab in self.tabs.values():
            try:
                problems = tab.problems()
                if problems:
                    print(f"browser-test: tab {tab.name} logged:\n  " + "\n  ".join(problems))
            except Exception:
                pass
        for name, server in [("the server", self.server)] + [(f"node {i + 1}", n) for i, n in enumerate(self.nodes)]:
            print(f"browser-test: {name}'s last output:")
            for line in server.output:
                print("  | " + line)

    def cleanup(self):
        if self.browser:
            self.browser.close()
        self.server.kill()
        shutil.rmtree(self.data, ignore_errors=True)
        for node in self.nodes:
            node.kill()
            shutil.rmtree(node.data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="the live-server executable")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--docs", help="write desktop.png and phone.png here (else a temporary folder)")
    parser.add_argument("--timeout", type=int, default=300, help="the whole run's limit in seconds")
    add_proxy_options(parser)
    options = parser.parse_args()
    run_checks(options)


def add_proxy_options(parser):
    """The options that run the test through a proxy in front of the server (proxy_test.py uses them)."""
    parser.add_argument("--port", type=int, default=0, help="the server's port (else a free one)")
    parser.add_argument("--base", help="the address the tabs open, a proxy's (else the server's own)")
    parser.add_argument("--server-argument", dest="server_arguments", action="append", default=[],
                        help="one more argument for live-server (repeat it; use --server-argument=--flag)")
    parser.add_argument("--chromium-flag", dest="chromium_flags", action="append", default=[],
                        help="one more flag for chromium, such as --chromium-flag=--ignore-certificate-errors")


def run_checks(options):
    """Runs every check within options.timeout seconds; exits 0 only when all passed."""

    def overtime(*_):
        raise Failed(f"the run took over {options.timeout} s")

    def interrupted(*_):
        raise Failed("interrupted by SIGTERM")
    signal.signal(signal.SIGALRM, overtime)
    signal.signal(signal.SIGTERM, interrupted)
    signal.alarm(options.timeout)
    run = Run(options)
    sys.exit(run.run())


if __name__ == "__main__":
    main()
