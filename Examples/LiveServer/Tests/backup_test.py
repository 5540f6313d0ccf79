#!/usr/bin/env python3
"""Backups of a running board's data folder (python3 standard library only; called by backup-test.sh).

The two copies Docs/RunningInProduction.md names, each made of a folder that a live-server is using
while a client writes to it, then checked with `live-server --check COPY` (exit 0) and opened by a
second live-server on another port, whose board must hold every acknowledged command. The server
writes a snapshot every 25 commands, so segments are started and deleted while the client writes:

  stop, copy, start   SIGTERM (the server drains and exits 0), `cp -a`, the server started again on the
                      original folder; the copy holds everything acknowledged
  pause, copy, resume SIGSTOP to the pid in DATA/live-server.lock while a client keeps sending,
                      `cp -a`, SIGCONT: the copy is the folder at one instant, as a file-system snapshot
                      (or a crash) leaves it; it opens (a torn tail, if any, is cut at its start) and holds
                      every command acknowledged before the pause

Prints `backup-test: ok …` per copy; exits 0 only when both passed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import ALPHA_TOKEN, Failed, Server, WebSocketClient, expect, free_port  # noqa: E402


def connect(port):
    """A client of team alpha that sent its hello; returns it with the view of its snapshot."""
    client = WebSocketClient("127.0.0.1", port, "/live?team=alpha")
    client.send_text(json.dumps({"type": "hello", "protocol": 1, "token": ALPHA_TOKEN}))
    while True:
        frame = json.loads(client.receive(10))
        if frame["type"] == "snapshot":
            return client, frame["view"]
        expect(frame["type"] == "welcome", f"the hello was answered {frame}")


def board(port):
    """The texts of team alpha's items, as a new client is sent them."""
    client, view = connect(port)
    client.close()
    return [item["text"] for item in view["items"]]


class Writer:
    """Adds items one at a time (each after the previous one's ack, 10 ms apart, at most 200, as a
    board holds 500) until stopped; `acked` lists the texts the server acknowledged."""

    def __init__(self, port, prefix):
        self.client, _ = connect(port)
        self.prefix, self.acked, self.stopping, self.error = prefix, [], False, None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            number = 0
            while not self.stopping and number < 200:
                time.sleep(0.01)
                number += 1
                text = f"{self.prefix} {number}"
                self.client.send_text(json.dumps({"type": "command", "ref": number, "command": {"add": {"text": text}}}))
                while True:
                    frame = json.loads(self.client.receive(30))
                    if frame.get("ref") == number:
                        expect(frame["type"] == "ack", f"command {number} was answered {frame}")
                        self.acked.append(text)
                        break
        except Exception as error:  # the server closing on a stop is not an error of the writer
            self.error = error

    def stop(self):
        self.stopping = True
        self.thread.join(40)
        self.client.close()


def check_copy(binary, copy):
    """`live-server --check COPY` exits 0; returns its output."""
    result = subprocess.run([binary, "--check", copy], capture_output=True, text=True, timeout=60)
    expect(result.returncode == 0, f"live-server --check {copy} exited {result.returncode}: {result.stderr}{result.stdout}")
    return (result.stderr + result.stdout).strip()


def opened_copy(binary, copy):
    """The items of the board a second live-server serves from `copy`."""
    server = Server(binary, free_port(), copy, [])
    server.start()
    try:
        return board(server.port)
    finally:
        expect(server.stop() is not None, "the server on the copy did not stop")


class Run:
    def __init__(self, options):
        self.binary = options.server
        self.folder = tempfile.mkdtemp(prefix="live-board-backup-")
        self.data = os.path.join(self.folder, "data")
        # A snapshot every 25 commands: new segments are started and old files deleted while it copies.
        self.server = Server(self.binary, free_port(), self.data, ["--team", f"alpha={ALPHA_TOKEN}", "--snapshot-every", "25"])

    def stop_copy_start(self):
        self.server.start()
        writer = Writer(self.server.port, "before the stop")
        time.sleep(1.0)
        took = self.server.stop()  # while the writer sends: its last command may be unanswered
        writer.stop()
        expect(took is not None and self.server.process.returncode == 0, "SIGTERM did not stop the server with status 0")
        copy = os.path.join(self.folder, "stopped-copy")
        subprocess.run(["cp", "-a", self.data, copy], check=True)
        self.server.start()  # service again, on the original folder
        checked = check_copy(self.binary, copy)
        served = opened_copy(self.binary, copy)
        missing = [text for text in writer.acked if text not in served]
        expect(writer.acked and not missing, f"{len(missing)} of {len(writer.acked)} acknowledged commands are not in the copy")
        expect(served == board(self.server.port), "the copy and the restarted original differ")
        return f"{len(writer.acked)} acknowledged adds; --check: {checked.splitlines()[-1]}"

    def pause_copy_resume(self):
        writer = Writer(self.server.port, "before the pause")
        time.sleep(1.5)
        with open(os.path.join(self.data, "live-server.lock")) as file:
            pid = int(file.read().strip())
        expect(pid == self.server.process.pid, f"live-server.lock names pid {pid}, not the server's {self.server.process.pid}")
        os.kill(pid, signal.SIGSTOP)
        try:
            acked = list(writer.acked)  # the server answers nothing more until it is continued
            copy = os.path.join(self.folder, "paused-copy")
            subprocess.run(["cp", "-a", self.data, copy], check=True)
        finally:
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.5)
        writer.stop()
        expect(writer.error is None, f"the writer stopped on {writer.error}")
        checked = check_copy(self.binary, copy)
        served = opened_copy(self.binary, copy)
        missing = [text for text in acked if text not in served]
        expect(acked and not missing, f"{len(missing)} of {len(acked)} commands acknowledged before the pause are not in the copy")
        # Later ones, acknowledged after the pause, are in the original only.
        expect(len(writer.acked) > len(acked), "the server acknowledged nothing after it was continued")
        return f"{len(acked)} adds acknowledged before the pause, all in the copy; --check: {checked.splitlines()[-1]}"

    def run(self):
        checks = [("stop, copy, start: the copy checks clean and opens with every acknowledged command", self.stop_copy_start),
                  ("pause, copy, resume: the copy checks clean and opens with every command acknowledged before the pause",
                   self.pause_copy_resume)]
        try:
            for name, check in checks:
                started = time.monotonic()
                try:
                    detail = check()
                except Exception as error:
                    print(f"backup-test: FAIL {name}: {error}")
                    print("backup-test: the server's last output:\n  | " + "\n  | ".join(self.server.output))
                    return 1
                print(f"backup-test: ok   {name} ({time.monotonic() - started:.1f} s; {detail})")
        finally:
            self.server.kill()
            shutil.rmtree(self.folder, ignore_errors=True)
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="the live-server executable")
    options = parser.parse_args()
    def overtime(*_):
        raise Failed("the run took over 240 s")
    signal.signal(signal.SIGALRM, overtime)
    signal.alarm(240)
    sys.exit(Run(options).run())


if __name__ == "__main__":
    main()
