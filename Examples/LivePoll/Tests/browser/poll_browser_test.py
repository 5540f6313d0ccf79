#!/usr/bin/env python3
"""Browser test of the live poll: the page and the JavaScript client (stillwater-live.js) in headless
Chromium, driven through the DevTools protocol with the live board's test helpers (python3 standard
library only).

  two tabs      tab A votes, tab B sees the tally and votes too, both show two voters, each its own vote
  refused       a tab with a wrong secret shows the refusal and the form to enter it again
  restart       SIGTERM stops the server within 5 s, tab A shows "reconnecting", changes its vote while
                the server is down (1 waiting), and after a restart both tabs show the changed vote once
  own votes     each tab shows only its own voter's vote; a third voter (a browser context of its own)
                has none until it votes, and its vote changes no other tab's "your vote"

Usage: poll_browser_test.py --server PATH/live-poll. Prints `poll-browser-test: N passed, M failed`;
exits 0 only when every check passed.
"""
import argparse, json, os, signal, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "LiveServer", "Tests"))
from browser_test import Browser, Failed, Tab, expect, free_port  # noqa: E402

SECRET = "poll-secret-for-the-browser-test"
TALLIES = "[...document.querySelectorAll('#tallies li')].map((li) => li.querySelector('.count').textContent).join(',')"
# Null-safe: a tab evaluates these before its page has loaded too (about:blank has no #status).
STATUS = "(document.getElementById('status') || {}).textContent || null"
YOUR_VOTE = "(document.getElementById('your-vote') || {}).textContent || null"


class Server:
    def __init__(self, binary, port, data):
        self.binary, self.port, self.data, self.process = binary, port, data, None

    def start(self, new=False):
        poll = ["--question", "Where to?", "--option", "Lake", "--option", "Hills", "--option", "Town"] if new else []
        self.process = subprocess.Popen([self.binary, "--data", self.data, "--port", str(self.port)] + poll,
                                        env=dict(os.environ, POLL_TOKEN=SECRET),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        expect("listening on" in line, f"live-poll did not start: {line}")

    def stop(self):
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(10)
        return status, time.monotonic() - started


def wait(tab, expression, expected, what, timeout=15):
    deadline = time.monotonic() + timeout
    while (value := tab.eval(expression)) != expected:
        if time.monotonic() > deadline:
            raise Failed(f"tab {tab.name}: {what}: expected {expected!r}, shows {value!r}")
        time.sleep(0.1)


def click(tab, option):
    tab.eval(f"document.querySelector('#tallies li[data-id=\"{option}\"] button').click()")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    options = parser.parse_args()
    data = tempfile.mkdtemp(prefix="live-poll-data-")
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    server = Server(options.server, port, data)
    browser = None
    passed, failed = 0, 0

    def check(name, body):
        nonlocal passed, failed
        try:
            body()
            passed += 1
            print(f"ok    {name}")
        except Exception as error:  # one check's failure stops the run: later checks build on it
            failed += 1
            print(f"FAIL  {name}: {error}")
            raise

    try:
        server.start(new=True)
        browser = Browser(shutil.which("chromium"))
        tabs = {}

        def two_tabs():
            tabs["a"] = Tab(browser.devtools, "a", base + "#token=" + SECRET)
            wait(tabs["a"], STATUS, "live", "connects")
            expect(tabs["a"].eval("document.getElementById('question').textContent") == "Where to?", "question shown")
            wait(tabs["a"], YOUR_VOTE, "You have not voted yet", "shows no vote before voting")
            click(tabs["a"], "o2")
            wait(tabs["a"], YOUR_VOTE, "Your vote: Hills", "shows its vote")
            tabs["b"] = Tab(browser.devtools, "b", base + "#token=" + SECRET)
            wait(tabs["b"], TALLIES, "0,1,0", "sees tab a's vote")
            # The tabs share one browser's storage, so one voter id: tab b becomes a second voter and reloads.
            tabs["b"].eval("localStorage.setItem('poll.voter', 'voter-b'); setTimeout(() => location.reload(), 0); true")
            time.sleep(0.5)
            wait(tabs["b"], STATUS, "live", "reconnects after the reload")
            wait(tabs["b"], YOUR_VOTE, "You have not voted yet", "a new voter has no vote")
            click(tabs["b"], "o1")
            for tab in tabs.values():
                wait(tab, TALLIES, "1,1,0", "sees both votes")
                wait(tab, "(document.getElementById('voters') || {}).textContent || null", "2 voters", "counts two voters")
            wait(tabs["b"], YOUR_VOTE, "Your vote: Lake", "shows its own vote")
            wait(tabs["a"], YOUR_VOTE, "Your vote: Hills", "keeps its own vote")
            expect(tabs["a"].eval("location.hash") == "", "the secret is taken out of the address bar")

        def refused():
            # A tab of its own browser profile would be cleaner; a wrong secret in the fragment replaces the stored one.
            tab = Tab(browser.devtools, "c", base + "#token=wrong-secret-000000000")
            wait(tab, STATUS, "the secret was refused", "shows the refusal")
            expect(tab.eval("(document.getElementById('join') || {}).hidden") is False, "the form to enter the secret is shown")
            tab.eval("localStorage.setItem('poll.token', " + json.dumps(SECRET) + ")")
            tab.close()

        def restart():
            status, took = server.stop()
            expect(status == 0 and took < 5, f"SIGTERM: status {status} after {took:.1f} s")
            wait(tabs["a"], STATUS, "reconnecting…", "shows reconnecting")
            click(tabs["a"], "o3")
            wait(tabs["a"], STATUS, "reconnecting… · 1 waiting", "shows the waiting vote")
            server.start()
            for tab in tabs.values():
                wait(tab, TALLIES, "1,0,1", "shows the changed vote once after the restart", timeout=30)
            wait(tabs["a"], STATUS, "live", "nothing left waiting")

        def own_votes():
            wait(tabs["a"], YOUR_VOTE, "Your vote: Town", "shows its changed vote")
            wait(tabs["b"], YOUR_VOTE, "Your vote: Lake", "shows its own vote, not tab a's")
            # Another person's browser: its own storage, so a voter id of its own.
            context = browser.devtools.call("Target.createBrowserContext")["browserContextId"]
            tab = Tab(browser.devtools, "d", base + "#token=" + SECRET, context)
            wait(tab, STATUS, "live", "connects")
            wait(tab, TALLIES, "1,0,1", "sees the tally")
            wait(tab, YOUR_VOTE, "You have not voted yet", "a third voter has no vote")
            click(tab, "o2")
            for each in (tab, tabs["a"], tabs["b"]):
                wait(each, TALLIES, "1,1,1", "sees the third vote")
                wait(each, "(document.getElementById('voters') || {}).textContent || null", "3 voters", "counts three voters")
            wait(tab, YOUR_VOTE, "Your vote: Hills", "shows its own vote")
            expect(tabs["a"].eval(YOUR_VOTE) == "Your vote: Town" and tabs["b"].eval(YOUR_VOTE) == "Your vote: Lake",
                   f"a third voter's vote changed another's: a {tabs['a'].eval(YOUR_VOTE)!r}, b {tabs['b'].eval(YOUR_VOTE)!r}")
            chosen = [t.eval("[...document.querySelectorAll('#tallies button.chosen')].map((b) => b.parentNode.dataset.id).join(',')")
                      for t in (tabs["a"], tabs["b"], tab)]
            expect(chosen == ["o3", "o1", "o2"], f"the highlighted options are {chosen}, expected each tab's own")
            tab.close()
            browser.devtools.call("Target.disposeBrowserContext", {"browserContextId": context})

        check("two tabs", two_tabs)
        check("refused", refused)
        check("restart", restart)
        check("own votes", own_votes)
    except Exception as error:  # a failed check printed itself already; anything before the first check did not
        if passed + failed == 0:
            print(f"FAIL  setup: {error}")
    finally:
        if browser:
            browser.close()
        if server.process and server.process.poll() is None:
            server.process.kill()
        shutil.rmtree(data, ignore_errors=True)
    print(f"poll-browser-test: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and passed == 4 else 1)


if __name__ == "__main__":
    main()
