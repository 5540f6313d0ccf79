#!/usr/bin/env bash
# Browser test of the live board: starts the server on a free port, opens the page in headless Chromium as
# two tabs (two frames of one page, each running its own scripted steps through the real WebSocket), dumps
# the DOM and asserts that both tabs show the same board, with every step applied, equal to what a third,
# fresh tab is sent as its snapshot. Then takes a screenshot of two converged tabs (UPDATE_SCREENSHOT=1
# writes it to Docs/converged.png).
# Needs Debian's `chromium` and python3; run from anywhere: bash Examples/LiveServer/Tests/browser-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

command -v chromium >/dev/null || { echo "browser-test: chromium is not installed (apt-get install -y chromium)"; exit 1; }
swift build --product live-server
server="$(swift build --show-bin-path)/live-server"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
# A crash prints its backtrace into the log, which a failed run shows (a passing run removes it).
SWIFT_BACKTRACE=enable=yes,interactive=no,color=no "$server" --port "$port" > "$log" 2>&1 &
server_pid=$!
hold_pid=""
cleanup() {
    local status=$?
    kill "$server_pid" $hold_pid 2>/dev/null || true
    if [ "$status" -ne 0 ]; then echo "browser-test: the server's output:"; tail -n 200 "$log"; fi
    rm -f "$log"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q "live-server:" "$log" && break; sleep 0.1; done
grep -q "live-server:" "$log" || { echo "browser-test: the server did not start"; cat "$log"; exit 1; }
base="http://127.0.0.1:$port"

# A responder that answers after 50 ms: the page's checks wait on it (see `hold` in index.html), so the
# browser's virtual clock stands still while the tabs wait for the server, however slow the machine.
hold_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$hold_port" <<'PY' &
import http.server, sys, time
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(0.05)
        self.send_response(204)
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Slow).serve_forever()
PY
hold_pid=$!
hold="http://127.0.0.1:$hold_port/hold"

browse() { # browse ARGS... URL: one headless Chromium run; waits (in virtual time) for the page to settle
    timeout 120 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
        --virtual-time-budget=30000 "$@" 2>/dev/null
}

# Tab A adds an item and ticks the first; tab B adds an item, moves the first to third place and renames
# the second; both at once against the same board.
a='add:Written in tab A;toggle:0'
b='add:Written in tab B;move:0:2;rename:1:Renamed in tab B'
encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
duo_dom=$(browse --dump-dom "$base/?duo=1&team=alpha&hold=$hold&a=$(encode "$a")&b=$(encode "$b")")
# Two more tabs with no steps, opened afterwards: each is sent the board as its snapshot.
fresh_dom=$(browse --dump-dom "$base/?duo=1&team=alpha&hold=$hold")

python3 - "$duo_dom" "$fresh_dom" <<'PY'
import html, re, sys
duo, fresh = sys.argv[1], sys.argv[2]
def fail(message):
    print("browser-test: FAILED:", message)
    sys.exit(1)
converged = re.search(r'id="duo" data-converged="(\w+)"', duo)
if not converged or converged.group(1) != "yes":
    fail("the tabs did not converge: " + (converged.group(1) if converged else "no status"))
boards = [html.unescape(m) for m in re.findall(r'<pre id="board-[ab]" class="duo-board">(.*?)</pre>', duo, re.S)][:2]  # the page script holds the same markup, later
if len(boards) != 2 or boards[0] != boards[1]:
    fail("the two tabs show different boards: %r" % boards)
board = boards[0].split("\n")
# Five accepted steps, each a visible change: version 5 on a fresh server.
if board[0] != "version 5":
    fail("expected version 5, got %r" % board[0])
for text in ("Written in tab A", "Written in tab B", "Renamed in tab B"):
    if not any(line.endswith(text) for line in board):
        fail("%r is missing from %r" % (text, board))
if not any(line.startswith("[x] ") for line in board[2:]):
    fail("no item is ticked in %r" % board)
# Tabs opened afterwards are sent a snapshot: they must show the same board, version included.
fresh_boards = [html.unescape(m) for m in re.findall(r'<pre id="board-[ab]" class="duo-board">(.*?)</pre>', fresh, re.S)][:2]
if fresh_boards != boards:
    fail("fresh tabs show %r, the two tabs %r" % (fresh_boards, boards))
print("browser-test: both tabs converged on", board[0] + ",", len(board) - 2, "items, equal to a fresh tab's snapshot")
PY

# The screenshot: two tabs of team beta, each with its own steps, converged. It replaces the committed
# Docs/converged.png only with UPDATE_SCREENSHOT=1; otherwise it goes to a temporary file (CI leaves the
# working tree as it found it).
if [ "${UPDATE_SCREENSHOT:-0}" = 1 ]; then
    mkdir -p Docs
    shot=Docs/converged.png
else
    shot=$(mktemp --suffix=.png)
fi
browse --screenshot="$shot" --window-size=1100,560 \
    "$base/?duo=1&team=beta&hold=$hold&a=$(encode 'add:Bring the slides;toggle:0')&b=$(encode 'add:Test the projector;title:Team Beta demo day')" >/dev/null
test -s "$shot" || { echo "browser-test: no screenshot"; exit 1; }
echo "browser-test: screenshot saved to $shot"
