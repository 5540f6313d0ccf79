// Tests of Sources/StillwaterHummingbird/Resources/stillwater-live.js, run with `node --test Tests/JavaScript/`
// (node 18 or later, no packages). A fake WebSocket plays the server, speaking the frames of
// Sources/StillwaterLive/StillwaterLive.docc/Protocol.md; a fake clock runs the timers, and a fake
// localStorage outlives a client to stand for a reload.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const Live = require(path.join(__dirname, "../../Sources/StillwaterHummingbird/Resources/stillwater-live.js"));
const { fakeClock, fakeStorage } = require("./fakes.js");

// ---- the fakes ----


/** A WebSocket class whose instances the test drives as the server. */
function fakeSockets() {
  const sockets = [];
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      this.closedByClient = null;
      sockets.push(this);
    }
    send(text) { assert.equal(this.readyState, 1, "send on a socket that is not open"); this.sent.push(JSON.parse(text)); }
    close(code) { this.closedByClient = code; this.readyState = 3; }
    // The server's side:
    open() { this.readyState = 1; this.onopen && this.onopen({}); }
    frame(object) { this.onmessage && this.onmessage({ data: typeof object === "string" ? object : JSON.stringify(object) }); }
    serverClose(code, reason) { this.readyState = 3; this.onclose && this.onclose({ code, reason: reason || "" }); }
    commands() { return this.sent.filter((f) => f.type === "command"); }
  }
  return { FakeSocket, sockets, last: () => sockets[sockets.length - 1] };
}

function seeded(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}

const STREAM = "s-5f0c1e2d3c4b5a69";
const CLIENT = "c018bcfe56800-0123456789abcdef";
const OTHER_CLIENT = "c018bcfe56801-fedcba9876543210";
/** A welcome; it names `client` (CLIENT by default, none for null). */
const welcome = (window, client) => {
  const frame = { type: "welcome", protocol: 1, stream: STREAM, window: window || 64 };
  if (client !== null) frame.client = client || CLIENT;
  return frame;
};
const snapshot41 = {
  type: "snapshot", stream: STREAM, version: 41,
  view: { title: "Groceries", items: [{ id: "i1", text: "Milk", done: false }] },
};

/** A client on fakes, with everything it reported. */
function harness(extra) {
  const clock = fakeClock();
  const net = fakeSockets();
  const views = [], statuses = [], errors = [], settled = [];
  let cids = 0;
  const options = Object.assign({
    token: "s3cret", params: { team: "alpha" },
    WebSocket: net.FakeSocket, storage: fakeStorage(), storageKey: "queue",
    setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, now: clock.now,
    random: seeded(7), newCid: () => "cid" + String(++cids).padStart(4, "0"),
    onView: (view, info) => views.push({ view, info }),
    onStatus: (status) => statuses.push(status),
    onError: (error) => errors.push(error),
    onSettled: (cid, error, answer) => settled.push({ cid, error, answer }),
  }, extra || {});
  const client = Live.connect("wss://example.test/live", options);
  return { client, clock, net, views, statuses, errors, settled, options };
}

/** Opens the current socket and brings it to a view: hello, welcome, then `first` (a snapshot by default). */
function bringLive(h, first, window, client) { return arrive(h, welcome(window, client), first); }

/** Opens the current socket and brings it to a view with the welcome `welcomeFrame`. */
function arrive(h, welcomeFrame, first) {
  const ws = h.net.last();
  ws.open();
  ws.frame(welcomeFrame);
  ws.frame(first || snapshot41);
  return ws;
}

/** A welcome (the default one) with `members` too: `you`, `expires`. */
const welcomeWith = (members) => Object.assign(welcome(), members);

const settle = () => new Promise((resolve) => setImmediate(resolve));

// ---- list patches ----

test("applyListPatch gives the protocol article's example: [A, B, C] → [C, A, D]", () => {
  const result = Live.applyListPatch(["A", "B", "C"], { changes: { deletes: [1], inserts: [2], moves: [[2, 0]] }, elements: ["C", "D"] });
  assert.deepEqual(result, ["C", "A", "D"]);
});

test("applyListPatch takes updates in place and leaves the old list as it was", () => {
  const old = ["a", "b", "c"];
  assert.deepEqual(Live.applyListPatch(old, { changes: { updates: [1] }, elements: ["B"] }), ["a", "B", "c"]);
  assert.deepEqual(old, ["a", "b", "c"]);
});

test("applyListPatch throws when a patch does not fit the list", () => {
  const misfits = [
    { changes: { deletes: [3] }, elements: [] },                    // index out of range
    { changes: { deletes: [0], updates: [0] }, elements: ["x"] },   // an index with two roles
    { changes: { inserts: [0] }, elements: [] },                    // too few elements
    { changes: { updates: [0] }, elements: ["x", "y"] },            // too many
    { changes: { inserts: [0, 0] }, elements: ["x", "y"] },         // a new index twice
  ];
  for (const patch of misfits) assert.throws(() => Live.applyListPatch(["a", "b", "c"], patch), Error, JSON.stringify(patch));
});

test("applyListPatch round-trips random lists against a reference diff", () => {
  const random = seeded(42);
  for (let round = 0; round < 300; round++) {
    const old = Array.from({ length: Math.floor(random() * 8) }, (_, i) => ({ id: "k" + i, v: 0 }));
    // The new list: some deleted, some updated, some new, shuffled.
    let next = old.filter(() => random() > 0.3).map((e) => (random() < 0.3 ? { id: e.id, v: 1 } : e));
    for (let i = 0; i < 3; i++) if (random() < 0.5) next.push({ id: "n" + round + "-" + i, v: 2 });
    next = next.map((e) => [random(), e]).sort((a, b) => a[0] - b[0]).map((p) => p[1]);
    const patch = referencePatch(old, next);
    assert.deepEqual(Live.applyListPatch(old, patch), next);
  }
});

// A straightforward (not minimal) list patch, built as the protocol describes one: every element whose
// old position among the staying ones would be out of order is a move.
function referencePatch(old, next) {
  const oldIndex = new Map(old.map((e, i) => [e.id, i]));
  const newIds = new Set(next.map((e) => e.id));
  const deletes = old.map((e, i) => (newIds.has(e.id) ? -1 : i)).filter((i) => i >= 0);
  const inserts = [], moves = [], updates = [];
  let lastStaying = -1;
  next.forEach((e, n) => {
    const k = oldIndex.get(e.id);
    if (k === undefined) inserts.push(n);
    else if (k > lastStaying) { lastStaying = k; if (old[k] !== e) updates.push(k); }
    else moves.push([k, n]);
  });
  // The elements: inserts and move targets at their new index, updates at the new index of their element.
  const readsNew = new Set(inserts.concat(moves.map((m) => m[1])));
  const updatedIds = new Set(updates.map((k) => old[k].id));
  const elements = next.filter((e, n) => readsNew.has(n) || updatedIds.has(e.id));
  updates.sort((a, b) => a - b);
  return { changes: { deletes, inserts, moves, updates }, elements };
}

// ---- the connection ----

test("the hello carries protocol, token and params, and nothing else", () => {
  const h = harness();
  const ws = h.net.last();
  ws.open();
  assert.deepEqual(ws.sent, [{ type: "hello", protocol: 1, token: "s3cret", params: { team: "alpha" } }]);
});

test("a snapshot then a patch with set and a list patch give the server's view, one onView per frame", () => {
  const h = harness();
  bringLive(h, {
    type: "snapshot", stream: STREAM, version: 41,
    view: { title: "Groceries", items: [{ id: "i1", text: "Milk", done: false }, { id: "i5", text: "Bread", done: false }, { id: "i6", text: "Jam", done: false }] },
  });
  assert.equal(h.client.status, "live");
  assert.deepEqual(h.statuses, ["live"]);
  h.net.last().frame({
    type: "patch", from: 41, version: 44, set: { title: "Weekend" },
    lists: { items: { changes: { deletes: [0], inserts: [0], moves: [[2, 1]], updates: [1] },
                      elements: [{ id: "i7", text: "Eggs", done: false }, { id: "i6", text: "Jam!", done: false }, { id: "i5", text: "Bread", done: true }] } },
  });
  assert.equal(h.views.length, 2);
  assert.equal(h.client.version, 44);
  assert.deepEqual(h.client.view, {
    title: "Weekend",
    items: [{ id: "i7", text: "Eggs", done: false }, { id: "i6", text: "Jam!", done: false }, { id: "i5", text: "Bread", done: true }],
  });
  assert.equal(h.views[0].info.snapshot, true);
  assert.deepEqual(Object.keys(h.views[1].info.changes), ["set", "lists"]);
  assert.notEqual(h.views[0].view, h.views[1].view, "each frame gives a new view object");
});

test("a patch from another version is not applied: the client reconnects and resumes from its own", () => {
  const h = harness();
  const ws = bringLive(h);
  ws.frame({ type: "patch", from: 42, version: 44, set: { title: "Weekend" } });
  assert.equal(h.client.view.title, "Groceries");
  assert.equal(h.client.version, 41);
  assert.equal(h.views.length, 1);
  assert.equal(ws.closedByClient, 1000);
  assert.equal(h.client.status, "waiting");
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  assert.notEqual(again, ws);
  again.open();
  assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
  again.frame(welcome());
  again.frame({ type: "patch", from: 41, version: 44, set: { title: "Weekend" } });
  assert.equal(h.client.view.title, "Weekend");
  assert.equal(h.client.status, "live");
});

test("a list patch that does not fit leaves the view and asks for a snapshot (no resume)", () => {
  const h = harness();
  const ws = bringLive(h);
  ws.frame({ type: "patch", from: 41, version: 42, lists: { items: { changes: { deletes: [5] }, elements: [] } } });
  assert.equal(h.client.version, 41);
  assert.equal(h.client.view.items.length, 1);
  h.clock.advance(h.clock.nextDelay());
  h.net.last().open();
  assert.equal(h.net.last().sent[0].resume, undefined);
});

test("an up-to-date patch after a resume moves nothing but still counts as a frame", () => {
  const h = harness();
  const ws = bringLive(h);
  ws.serverClose(1001);
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  again.open();
  again.frame(welcome());
  again.frame({ type: "patch", from: 41, version: 41 });
  assert.equal(h.views.length, 2);
  assert.deepEqual(h.views[1].view, h.views[0].view);
});

// ---- commands ----

test("send resolves on its ack; an ack before the patch is fine", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.send({ add: { text: "Buy milk" } });
  assert.deepEqual(ws.commands(), [{ type: "command", ref: 1, seq: 1, command: { add: { text: "Buy milk" } } }]);
  assert.equal(h.client.pending, 1);
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });
  assert.deepEqual(await answer, { version: 42, duplicate: false, cid: "cid0001", seq: 1 });
  assert.equal(h.client.pending, 0);
  assert.deepEqual(JSON.parse(h.options.storage.getItem("queue")), { client: CLIENT, next: 2, queue: [] },
                   "an answered command leaves the stored queue; the id and the next number stay");
});

test("a duplicate ack resolves with duplicate: true, and a second answer for the same command is ignored", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.send({ toggle: { id: "i1" } });
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 40, duplicate: true });
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 40 });
  assert.deepEqual(await answer, { version: 40, duplicate: true, cid: "cid0001", seq: 1 });
  assert.equal(h.settled.length, 1);
});

test("an error about a command rejects its promise with code and message; one about no command goes to onError", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.send({ delete: { id: "i99" } });
  ws.frame({ type: "error", code: "rejected", message: "no item with id \"i99\"", ref: 1, seq: 1 });
  await assert.rejects(answer, (error) => error instanceof Live.LiveError && error.code === "rejected" && /i99/.test(error.message) &&
    error.retry === false && error.seq === 1 && error.cid === "cid0001");
  ws.frame({ type: "error", code: "malformed", message: "not a JSON object" });
  assert.equal(h.errors.at(-1).code, "malformed");
  assert.equal(h.client.pending, 0);
});

test("an error with retry keeps the command and sends it again, same number, after a delay", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.send({ add: { text: "Tea" } });
  ws.frame({ type: "error", code: "unavailable", message: "the log could not record the command; try again later", ref: 1, seq: 1, retry: true });
  assert.equal(ws.commands().length, 1, "not sent again at once");
  assert.equal(h.client.pending, 1);
  h.clock.advance(h.clock.nextDelay());
  assert.deepEqual(ws.commands().map((c) => [c.ref, c.seq]), [[1, 1], [2, 1]]);
  ws.frame({ type: "ack", ref: 2, seq: 1, version: 42 });
  assert.equal((await answer).version, 42);
});

test("no more than the welcome's window is unanswered at once", () => {
  const h = harness();
  const ws = bringLive(h, null, 2);
  for (let i = 0; i < 5; i++) h.client.send({ n: i }).catch(() => {});
  assert.equal(ws.commands().length, 2);
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });
  assert.equal(ws.commands().length, 3);
  assert.deepEqual(ws.commands().map((c) => c.command.n), [0, 1, 2]);
});

test("commands wait for the welcome, and go out in order after it", () => {
  const h = harness();
  const ws = h.net.last();
  h.client.send({ n: 1 }).catch(() => {});
  ws.open();
  h.client.send({ n: 2 }).catch(() => {});
  assert.deepEqual(ws.commands(), []);
  ws.frame(welcome());
  assert.deepEqual(ws.commands().map((c) => c.command.n), [1, 2]);
});

// ---- reconnecting ----

test("close 1001: reconnect, resume, resend the unanswered command with its number; answered once", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.send({ add: { text: "Milk" } });
  ws.serverClose(1001, "going away");
  assert.equal(h.client.status, "waiting");
  const offline = h.client.send({ add: { text: "Eggs" } });   // made while disconnected
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  again.open();
  assert.deepEqual(again.sent[0], { type: "hello", protocol: 1, token: "s3cret", params: { team: "alpha" }, client: CLIENT, resume: { stream: STREAM, version: 41 } });
  again.frame(welcome());
  assert.deepEqual(again.commands().map((c) => c.seq), [1, 2]);
  again.frame({ type: "patch", from: 41, version: 43, set: { title: "Groceries" } });
  again.frame({ type: "ack", ref: again.commands()[0].ref, seq: 1, version: 42, duplicate: true });
  again.frame({ type: "ack", ref: again.commands()[1].ref, seq: 2, version: 43 });
  assert.deepEqual(await answer, { version: 42, duplicate: true, cid: "cid0001", seq: 1 });
  assert.deepEqual(await offline, { version: 43, duplicate: false, cid: "cid0002", seq: 2 });
  assert.equal(h.settled.length, 2);
});

test("the offline queue survives a reload through localStorage and is answered once", async () => {
  const storage = fakeStorage();
  const first = harness({ storage });
  first.client.send({ add: { text: "Bread" } }).catch(() => {});   // never connected: stays queued
  first.client.send({ toggle: { id: "i1" } }).catch(() => {});
  assert.deepEqual(JSON.parse(storage.getItem("queue")).queue.map((e) => [e.cid, e.seq]), [["cid0001", 1], ["cid0002", 2]]);
  first.client.close();   // the page goes away
  await settle();
  assert.equal(first.client.status, "closed");
  assert.equal(JSON.parse(storage.getItem("queue")).queue.length, 2, "closing keeps the queue");

  const second = harness({ storage, newCid: () => "fresh" + Math.random().toString(36).slice(2, 8) });
  assert.equal(second.client.pending, 2);
  const ws = bringLive(second);
  assert.deepEqual(ws.commands().map((c) => [c.seq, c.command]), [[1, { add: { text: "Bread" } }], [2, { toggle: { id: "i1" } }]]);
  ws.frame({ type: "ack", ref: ws.commands()[0].ref, seq: 1, version: 42 });
  ws.frame({ type: "ack", ref: ws.commands()[1].ref, seq: 2, version: 43 });
  assert.deepEqual(second.settled.map((s) => [s.cid, s.answer.seq, s.answer.version]), [["cid0001", 1, 42], ["cid0002", 2, 43]]);
  assert.deepEqual(JSON.parse(storage.getItem("queue")), { client: CLIENT, next: 3, queue: [] });
});

test("a stored queue that is not ours is ignored, not sent", () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify([{ cid: "bad cid!", command: 1 }, "junk", { cid: "ok_1", command: { n: 1 } }]));
  const h = harness({ storage });
  const ws = bringLive(h);
  assert.deepEqual(ws.commands().map((c) => c.cid), ["ok_1"]);
});

test("4401: the client stops, reports the server's message, and keeps the queue", async () => {
  const h = harness();
  const ws = h.net.last();
  ws.open();
  const answer = h.client.send({ n: 1 });
  ws.frame({ type: "error", code: "unauthorized", message: "wrong token" });
  assert.equal(h.errors.length, 0, "reported with the close, once");
  ws.serverClose(4401);
  assert.equal(h.client.status, "refused");
  assert.equal(h.errors.length, 1);
  assert.equal(h.errors[0].code, "unauthorized");
  assert.match(h.errors[0].message, /wrong token/);
  await assert.rejects(answer, (e) => e.code === "closed");
  h.clock.advance(60000);
  assert.equal(h.net.sockets.length, 1, "no reconnect after 4401");
  assert.equal(JSON.parse(h.options.storage.getItem("queue")).queue.length, 1);
  await assert.rejects(h.client.send({ n: 2 }), (e) => e.code === "closed");
});

test("4400 stops with the error frame's code; 4408 and 4429 reconnect", () => {
  const h = harness();
  let ws = h.net.last();
  ws.open();
  ws.frame({ type: "error", code: "unsupported_protocol", message: "protocol 1 is not spoken" });
  ws.serverClose(4400);
  assert.equal(h.client.status, "failed");
  assert.equal(h.errors[0].code, "unsupported_protocol");

  for (const code of [4408, 4429, 1006]) {
    const other = harness();
    bringLive(other).serverClose(code);
    assert.equal(other.client.status, "waiting", "after " + code);
    other.clock.advance(other.clock.nextDelay());
    assert.equal(other.net.sockets.length, 2, "reconnected after " + code);
  }
});

test("no welcome and view within the hello timeout: dropped and tried again", () => {
  const h = harness({ helloTimeout: 5000 });
  const ws = h.net.last();
  ws.open();
  ws.frame(welcome());
  h.clock.advance(5000);
  assert.equal(ws.closedByClient, 1000);
  assert.equal(h.client.status, "waiting");
});

test("backoff doubles from 500 ms to at most 10 s with ±20 % jitter, and resets once a view arrives", () => {
  for (let attempt = 0; attempt < 12; attempt++) {
    const base = Math.min(10000, 500 * 2 ** attempt);
    assert.equal(Live.backoffDelay(attempt, 0, undefined), Math.round(base * 0.8));
    assert.equal(Live.backoffDelay(attempt, 0.5, undefined), base);
    assert.ok(Live.backoffDelay(attempt, 0.999999, undefined) <= base * 1.2);
  }
  // A client that never gets through: its delays grow and stay within the bounds, whatever the seed.
  for (const seed of [1, 2, 3]) {
    const h = harness({ random: seeded(seed) });
    const delays = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      h.net.last().serverClose(1006);
      const delay = h.clock.nextDelay();
      const base = Math.min(10000, 500 * 2 ** attempt);
      assert.ok(delay >= base * 0.8 && delay <= base * 1.2, "attempt " + attempt + ": " + delay);
      delays.push(delay);
      h.clock.advance(delay);
    }
    assert.ok(delays[9] >= 8000);
    bringLive(h);
    h.net.last().serverClose(1001);
    assert.ok(h.clock.nextDelay() <= 600, "back to the first delay after a view");
  }
});

test("an unreadable frame drops the connection; a hook that throws is reported, not fatal", () => {
  const h = harness({ onView: () => { throw new Error("render failed"); } });
  const ws = bringLive(h);
  assert.equal(h.errors.at(-1).code, "hook");
  assert.equal(h.client.status, "live");
  ws.frame("not json");
  assert.equal(h.client.status, "waiting");
  assert.equal(h.errors.at(-1).code, "dropped");
});

test("queued lists the unanswered commands (the stored ones at once); onQueue sees every change before onSettled", async () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify([{ cid: "old_1", command: { add: { text: "Stored" } } }]));
  const seen = [];
  const h = harness({
    storage,
    onQueue: (queued) => seen.push(queued.map((e) => e.cid)),
    onSettled: (cid) => seen.push("settled " + cid),
  });
  assert.deepEqual(h.client.queued, [{ cid: "old_1", seq: null, command: { add: { text: "Stored" } } }]);
  assert.deepEqual(seen, [], "no call for the queue read at the start");
  const answer = h.client.send({ toggle: { id: "i1" } });
  assert.deepEqual(seen, [["old_1", "cid0001"]]);
  const copy = h.client.queued;
  copy.pop();
  assert.equal(h.client.queued.length, 2, "queued is a copy");
  const ws = bringLive(h);
  assert.deepEqual(ws.commands().map((c) => [c.cid, c.seq]), [["old_1", undefined], [undefined, 1]]);
  ws.frame({ type: "ack", ref: ws.commands()[0].ref, cid: "old_1", version: 42 });
  ws.frame({ type: "error", ref: ws.commands()[1].ref, seq: 1, code: "rejected", message: "no such item" });
  await assert.rejects(answer, (error) => error.code === "rejected");
  assert.deepEqual(seen, [["old_1", "cid0001"], ["cid0001"], "settled old_1", [], "settled cid0001"]);
  assert.deepEqual(h.client.queued, []);
});

test("reconnect() while waiting connects at once and resumes; in any other status it does nothing", () => {
  const h = harness();
  assert.equal(h.client.reconnect(), false, "connecting");
  const ws = bringLive(h);
  assert.equal(h.client.reconnect(), false, "live");
  ws.serverClose(1006);
  assert.equal(h.client.status, "waiting");
  assert.ok(h.clock.nextDelay() > 0);
  const sockets = h.net.sockets.length;
  assert.equal(h.client.reconnect(), true);
  assert.equal(h.net.sockets.length, sockets + 1, "a new socket without the clock moving");
  assert.equal(h.client.status, "connecting");
  assert.equal(h.clock.nextDelay(), 10000, "only the hello timeout is pending: the backoff timer is gone");
  const again = h.net.last();
  again.open();
  assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
  h.client.close();
  assert.equal(h.client.reconnect(), false, "closed");
});

// ---- exactly once: the client id and numbered commands ----

test("the welcome's id numbers the commands 1, 2, 3, is stored, and the hello after a reconnect carries it", async () => {
  const h = harness();
  const ws = bringLive(h);
  assert.equal(h.client.clientId, CLIENT);
  const answers = [1, 2, 3].map((n) => h.client.send({ n }));
  assert.deepEqual(ws.commands().map((c) => [c.seq, c.cid, c.command.n]), [[1, undefined, 1], [2, undefined, 2], [3, undefined, 3]]);
  assert.deepEqual(h.client.queued.map((e) => [e.cid, e.seq]), [["cid0001", 1], ["cid0002", 2], ["cid0003", 3]]);
  const stored = JSON.parse(h.options.storage.getItem("queue"));
  assert.equal(stored.client, CLIENT);
  assert.equal(stored.next, 4);
  assert.deepEqual(stored.queue.map((e) => [e.seq, e.sent]), [[1, true], [2, true], [3, true]]);
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });
  ws.serverClose(1001);
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  again.open();
  assert.equal(again.sent[0].client, CLIENT);
  assert.deepEqual(again.commands(), [], "nothing numbered goes before the welcome");
  again.frame(welcome());
  assert.deepEqual(again.commands().map((c) => c.seq), [2, 3]);
  again.frame({ type: "ack", ref: again.commands()[0].ref, seq: 2, version: 43, duplicate: true });
  again.frame({ type: "ack", ref: again.commands()[1].ref, seq: 3, version: 44 });
  assert.deepEqual((await Promise.all(answers)).map((a) => [a.seq, a.version, a.duplicate]), [[1, 42, false], [2, 43, true], [3, 44, false]]);
  h.client.send({ n: 4 }).catch(() => {});
  assert.equal(again.commands().at(-1).seq, 4);
});

test("a reload keeps the id, the numbers and the queue; numbering goes on where it stopped", async () => {
  const storage = fakeStorage();
  const first = harness({ storage });
  const ws = bringLive(first);
  for (let n = 1; n <= 3; n++) first.client.send({ n }).catch(() => {});
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });   // 2 and 3 are sent, their answers lost with the page
  first.client.close();
  await settle();

  const second = harness({ storage, newCid: () => "after" + Math.random().toString(36).slice(2, 8) });
  assert.equal(second.client.clientId, CLIENT);
  assert.deepEqual(second.client.queued.map((e) => [e.seq, e.command.n]), [[2, 2], [3, 3]]);
  const offline = second.client.send({ n: 4 });
  assert.equal(second.client.queued.at(-1).seq, 4);
  const again = second.net.last();
  again.open();
  assert.equal(again.sent[0].client, CLIENT);
  again.frame(welcome());
  again.frame(snapshot41);
  assert.deepEqual(again.commands().map((c) => [c.seq, c.command.n]), [[2, 2], [3, 3], [4, 4]]);
  again.frame({ type: "ack", ref: again.commands()[0].ref, seq: 2, version: 43, duplicate: true });
  again.frame({ type: "ack", ref: again.commands()[1].ref, seq: 3, version: 44, duplicate: true });
  again.frame({ type: "ack", ref: again.commands()[2].ref, seq: 4, version: 45 });
  assert.deepEqual(await offline, { version: 45, duplicate: false, cid: second.settled[2].cid, seq: 4 });
  assert.deepEqual(second.settled.map((s) => [s.answer.seq, s.answer.duplicate]), [[2, true], [3, true], [4, false]]);
  assert.deepEqual(JSON.parse(storage.getItem("queue")), { client: CLIENT, next: 5, queue: [] });
});

test("out_of_order: the commands from `expected` on are sent again at once, in order, and answered once", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answers = [1, 2, 3].map((n) => h.client.send({ n }));
  // The server lost number 1 (it never arrived): 2 and 3 come back out of order.
  ws.frame({ type: "error", code: "out_of_order", message: "next is 1", ref: 2, seq: 2, expected: 1, retry: true });
  assert.deepEqual(ws.commands().map((c) => c.seq), [1, 2, 3, 1, 2, 3]);
  ws.frame({ type: "error", code: "out_of_order", message: "next is 1", ref: 3, seq: 3, expected: 1, retry: true });   // old news
  assert.equal(ws.commands().length, 6, "the answer to a frame sent again since sends nothing more");
  const resent = ws.commands().slice(3);
  resent.forEach((c, i) => ws.frame({ type: "ack", ref: c.ref, seq: c.seq, version: 42 + i }));
  assert.deepEqual((await Promise.all(answers)).map((a) => [a.seq, a.version]), [[1, 42], [2, 43], [3, 44]]);
  ws.frame({ type: "error", code: "unavailable", message: "late answer to the first frame of 1", ref: 1, seq: 1, retry: true });
  assert.equal(ws.commands().length, 6);
  assert.equal(h.settled.length, 3);
  assert.equal(h.errors.length, 0);
});

test("unavailable: no later number goes before the earlier one is sent again; then all go in order", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answers = [1, 2, 3].map((n) => h.client.send({ n }));
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });
  ws.frame({ type: "error", code: "unavailable", message: "try again later", ref: 2, seq: 2, retry: true });
  ws.frame({ type: "error", code: "out_of_order", message: "next is 2", ref: 3, seq: 3, expected: 2, retry: true });
  h.client.send({ n: 4 }).catch(() => {});
  assert.deepEqual(ws.commands().map((c) => c.seq), [1, 2, 3], "3 and 4 wait for 2's retry");
  h.clock.advance(h.clock.nextDelay());
  assert.deepEqual(ws.commands().map((c) => c.seq), [1, 2, 3, 2, 3, 4]);
  for (const c of ws.commands().slice(3)) ws.frame({ type: "ack", ref: c.ref, seq: c.seq, version: 41 + c.seq });
  assert.deepEqual((await Promise.all(answers)).map((a) => a.version), [42, 43, 44]);
});

test("a command refused without using its number (bad_command) leaves no gap: the later ones are numbered down", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answers = [1, 2, 3].map((n) => h.client.send({ n }));
  ws.frame({ type: "error", code: "bad_command", message: "the command does not decode", ref: 1 });
  await assert.rejects(answers[0], (e) => e.code === "bad_command" && e.seq === 1);
  ws.frame({ type: "error", code: "out_of_order", message: "next is 1", ref: 2, seq: 2, expected: 1, retry: true });
  assert.deepEqual(h.client.queued.map((e) => [e.cid, e.seq]), [["cid0002", 1], ["cid0003", 2]]);
  assert.deepEqual(ws.commands().slice(3).map((c) => [c.seq, c.command.n]), [[1, 2], [2, 3]]);
  ws.frame({ type: "error", code: "out_of_order", message: "next is 1", ref: 3, seq: 3, expected: 1, retry: true });
  assert.equal(ws.commands().length, 5);
  const [a, b] = ws.commands().slice(3);
  ws.frame({ type: "ack", ref: a.ref, seq: 1, version: 42 });
  ws.frame({ type: "ack", ref: b.ref, seq: 2, version: 43 });
  assert.deepEqual(await answers[1], { version: 42, duplicate: false, cid: "cid0002", seq: 1 });
  assert.deepEqual(await answers[2], { version: 43, duplicate: false, cid: "cid0003", seq: 2 });
  h.client.send({ n: 4 }).catch(() => {});
  assert.equal(ws.commands().at(-1).seq, 3);
});

test("client_expired: the numbered commands settle with it, the id is dropped, and the next hello has none", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answers = [1, 2].map((n) => h.client.send({ n }));
  ws.frame({ type: "error", code: "client_expired", message: "this client id is no longer known; start again without the id", ref: 1, seq: 1 });
  for (const [i, answer] of answers.entries()) {
    await assert.rejects(answer, (e) => e instanceof Live.LiveError && e.code === "client_expired" && e.retry === false && e.seq === i + 1);
  }
  assert.deepEqual(h.settled.map((s) => [s.cid, s.error.code]), [["cid0001", "client_expired"], ["cid0002", "client_expired"]]);
  assert.equal(h.client.clientId, null);
  assert.equal(h.client.pending, 0);
  assert.equal(h.options.storage.getItem("queue"), null, "nothing left to store: no id, no queue");
  assert.equal(ws.closedByClient, 1000);
  const again = h.net.last();
  assert.notEqual(again, ws, "connects again at once, as a new client");
  const next = h.client.send({ n: 3 });
  again.open();
  assert.equal(again.sent[0].client, undefined);
  assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
  ws.frame({ type: "error", code: "client_expired", message: "late", ref: 2, seq: 2 });   // the old socket: ignored
  again.frame(welcome(64, OTHER_CLIENT));
  assert.equal(h.client.clientId, OTHER_CLIENT);
  assert.deepEqual(again.commands().map((c) => [c.seq, c.command.n]), [[1, 3]]);
  again.frame({ type: "ack", ref: again.commands()[0].ref, seq: 1, version: 42 });
  assert.equal((await next).seq, 1);
  assert.equal(JSON.parse(h.options.storage.getItem("queue")).client, OTHER_CLIENT);
});

test("a stored queue of the old format ({cid, command}) is sent with its cids, unnumbered; new commands are numbered", async () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify([{ cid: "old_1", command: { n: 1 } }, { cid: "old_2", command: { n: 2 } }]));
  const h = harness({ storage });
  assert.deepEqual(h.client.queued, [{ cid: "old_1", seq: null, command: { n: 1 } }, { cid: "old_2", seq: null, command: { n: 2 } }]);
  const fresh = h.client.send({ n: 3 });
  const ws = h.net.last();
  ws.open();
  assert.equal(ws.sent[0].client, undefined);
  ws.frame(welcome());
  assert.deepEqual(ws.commands(), [
    { type: "command", ref: 1, cid: "old_1", command: { n: 1 } },
    { type: "command", ref: 2, cid: "old_2", command: { n: 2 } },
    { type: "command", ref: 3, seq: 1, command: { n: 3 } },
  ]);
  assert.deepEqual(JSON.parse(storage.getItem("queue")), {
    client: CLIENT, next: 2,
    queue: [{ cid: "old_1", command: { n: 1 } }, { cid: "old_2", command: { n: 2 } }, { cid: "cid0001", seq: 1, command: { n: 3 }, sent: true }],
  });
  ws.frame({ type: "ack", ref: 1, cid: "old_1", version: 42, duplicate: true });
  ws.frame({ type: "error", ref: 2, cid: "old_2", code: "unavailable", message: "later", retry: true });
  ws.frame({ type: "ack", ref: 3, seq: 1, version: 43 });
  assert.deepEqual(await fresh, { version: 43, duplicate: false, cid: "cid0001", seq: 1 });
  h.clock.advance(h.clock.nextDelay());
  assert.deepEqual(ws.commands().at(-1), { type: "command", ref: 4, cid: "old_2", command: { n: 2 } });
  ws.frame({ type: "ack", ref: 4, cid: "old_2", version: 44 });
  assert.deepEqual(h.settled.map((s) => [s.cid, s.answer.seq, s.answer.version]), [["old_1", null, 42], ["cid0001", 1, 43], ["old_2", null, 44]]);
});

test("a welcome with another id: commands sent under the old one settle with client_changed; the others are numbered from 1", async () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify({
    client: CLIENT, next: 8,
    queue: [{ cid: "a", seq: 6, command: { n: 6 }, sent: true }, { cid: "b", seq: 7, command: { n: 7 }, sent: false }],
  }));
  const h = harness({ storage });
  const ws = h.net.last();
  ws.open();
  assert.equal(ws.sent[0].client, CLIENT);
  ws.frame(welcome(64, OTHER_CLIENT));
  assert.equal(h.client.clientId, OTHER_CLIENT);
  assert.deepEqual(h.settled.map((s) => [s.cid, s.error && s.error.code, s.error && s.error.seq]), [["a", "client_changed", 6]]);
  assert.deepEqual(ws.commands().map((c) => [c.seq, c.command.n]), [[1, 7]]);
  h.client.send({ n: 8 }).catch(() => {});
  assert.deepEqual(ws.commands().map((c) => [c.seq, c.command.n]), [[1, 7], [2, 8]]);
  const stored = JSON.parse(storage.getItem("queue"));
  assert.equal(stored.client, OTHER_CLIENT);
  assert.equal(stored.next, 3);
  assert.deepEqual(stored.queue.map((e) => [e.cid, e.seq]), [["b", 1], ["cid0001", 2]]);
});

test("commands queued before the first welcome are numbered from 1 and go once it names the id", () => {
  const h = harness();
  h.client.send({ n: 1 }).catch(() => {});
  h.client.send({ n: 2 }).catch(() => {});
  assert.deepEqual(h.client.queued.map((e) => e.seq), [1, 2]);
  assert.equal(JSON.parse(h.options.storage.getItem("queue")).client, null);
  const ws = h.net.last();
  ws.open();
  assert.equal(ws.sent[0].client, undefined);
  assert.deepEqual(ws.commands(), []);
  ws.frame(welcome());
  assert.deepEqual(ws.commands().map((c) => c.seq), [1, 2]);
});

test("a welcome without an id: the view works, numbered commands wait, old unnumbered ones go", () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify([{ cid: "old_1", command: { n: 0 } }]));
  const h = harness({ storage });
  h.client.send({ n: 1 }).catch(() => {});
  const ws = bringLive(h, null, null, null);
  assert.equal(h.client.status, "live");
  assert.deepEqual(ws.commands().map((c) => [c.cid, c.seq]), [["old_1", undefined]]);
  assert.equal(h.errors.at(-1).code, "no_client");
  assert.equal(h.client.pending, 2);
});

test("an old stored queue survives into the new format and a reload", () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify([{ cid: "old_1", command: { n: 0 } }]));
  const first = harness({ storage });
  first.client.send({ n: 1 }).catch(() => {});
  first.client.close();
  const second = harness({ storage });
  assert.deepEqual(second.client.queued.map((e) => [e.cid, e.seq]), [["old_1", null], ["cid0001", 1]]);
  const ws = bringLive(second);
  assert.deepEqual(ws.commands().map((c) => [c.cid, c.seq]), [["old_1", undefined], [undefined, 1]]);
});

test("two pages on one storage key: the one loaded last owns the id and the queue; the other goes on as a new client", async () => {
  const storage = fakeStorage();
  const first = harness({ storage });
  const ws = bringLive(first);
  first.client.send({ n: 1 }).catch(() => {});
  const inFlight = first.client.send({ n: 2 });
  ws.frame({ type: "ack", ref: 1, seq: 1, version: 42 });

  const second = harness({ storage, newCid: () => "tab2" });   // another tab, loaded now: it takes over
  assert.deepEqual(second.client.queued.map((e) => [e.cid, e.seq]), [["cid0002", 2]]);

  const later = first.client.send({ n: 3 });   // the first page finds out when it stores
  await assert.rejects(inFlight, (e) => e.code === "superseded" && e.seq === 2);
  assert.equal(first.errors.at(-1).code, "superseded");
  assert.equal(first.client.clientId, null);
  assert.deepEqual(first.client.queued.map((e) => [e.cid, e.seq]), [["cid0003", 1]]);
  assert.deepEqual(ws.commands().map((c) => c.seq), [1, 2], "nothing new went out under the id");
  const fresh = first.net.last();
  assert.notEqual(fresh, ws);
  fresh.open();
  assert.equal(fresh.sent[0].client, undefined);
  fresh.frame(welcome(64, OTHER_CLIENT));
  assert.deepEqual(fresh.commands().map((c) => [c.seq, c.command.n]), [[1, 3]]);
  fresh.frame({ type: "ack", ref: fresh.commands()[0].ref, seq: 1, version: 44 });
  assert.equal((await later).version, 44);
  assert.deepEqual(JSON.parse(storage.getItem("queue")).queue.map((e) => e.cid), ["cid0002"], "the second page's store is left alone");

  const other = bringLive(second);
  assert.equal(other.sent[0].client, CLIENT);
  assert.deepEqual(other.commands().map((c) => [c.seq, c.command.n]), [[2, 2]]);
  other.frame({ type: "ack", ref: other.commands()[0].ref, seq: 2, version: 43, duplicate: true });
  second.client.send({ n: 4 }).catch(() => {});
  assert.equal(other.commands().at(-1).seq, 3);
  assert.deepEqual(JSON.parse(storage.getItem("queue")).queue.map((e) => [e.cid, e.seq]), [["tab2", 3]]);
});

test("with a stored id, a welcome that names none sends nothing numbered; the next welcome that names it does", () => {
  const storage = fakeStorage();
  storage.setItem("queue", JSON.stringify({ client: CLIENT, next: 3, queue: [{ cid: "a", seq: 2, command: { n: 2 }, sent: true }] }));
  const h = harness({ storage });
  const ws = bringLive(h, null, null, null);
  assert.equal(ws.sent[0].client, CLIENT);
  assert.deepEqual(ws.commands(), []);
  assert.equal(h.errors.at(-1).code, "no_client");
  assert.equal(h.client.clientId, CLIENT, "the stored id is kept");
  ws.serverClose(1001);
  h.clock.advance(h.clock.nextDelay());
  const again = bringLive(h);
  assert.deepEqual(again.commands().map((c) => c.seq), [2]);
});

// ---- who the client is, and credentials that expire ----

test("the welcome's you and expires are exposed as they came; null when a welcome has none", () => {
  const h = harness();
  assert.equal(h.client.you, null);
  assert.equal(h.client.expires, null);
  const ws = arrive(h, welcomeWith({ you: { name: "Ann", role: "member" }, expires: 1800000000000 }));
  assert.deepEqual(h.client.you, { name: "Ann", role: "member" });
  assert.equal(h.client.expires, 1800000000000);
  ws.serverClose(1001);
  h.clock.advance(h.clock.nextDelay());
  bringLive(h);
  assert.equal(h.client.you, null, "the next welcome has no you");
  assert.equal(h.client.expires, null);
});

test("reauth(token) by hand: a reauth frame, resolved on reauthed with the new expiry; later hellos carry the token", async () => {
  const h = harness();
  await assert.rejects(h.client.reauth("n3w"), (e) => e.code === "not_live");
  await assert.rejects(h.client.reauth(""), TypeError);
  const ws = arrive(h, welcomeWith({ expires: h.clock.now() + 60000 }));
  const answer = h.client.reauth("n3w-s3cret");
  const frame = ws.sent.at(-1);
  assert.deepEqual(frame, { type: "reauth", token: "n3w-s3cret", ref: frame.ref });
  ws.frame({ type: "reauthed", ref: frame.ref, expires: h.clock.now() + 3600000 });
  assert.deepEqual(await answer, { expires: h.clock.now() + 3600000 });
  assert.equal(h.client.expires, h.clock.now() + 3600000);
  // An answer to a command sent after the reauth is matched as usual (refs are not shared).
  const command = h.client.send({ n: 1 });
  ws.frame({ type: "ack", ref: ws.commands()[0].ref, seq: 1, version: 42 });
  assert.equal((await command).version, 42);
  ws.serverClose(1001);
  h.clock.advance(h.clock.nextDelay());
  h.net.last().open();
  assert.equal(h.net.last().sent[0].token, "n3w-s3cret");
  assert.equal(h.errors.length, 0);
});

test("reauth without expires in the answer: the credentials no longer expire; a drop before the answer rejects with closed", async () => {
  const h = harness();
  const ws = arrive(h, welcomeWith({ expires: h.clock.now() + 60000 }));
  const first = h.client.reauth("a");
  ws.frame({ type: "reauthed", ref: ws.sent.at(-1).ref });
  assert.deepEqual(await first, { expires: null });
  assert.equal(h.client.expires, null);
  const second = h.client.reauth("b");
  ws.serverClose(1006);
  await assert.rejects(second, (e) => e.code === "closed");
  assert.equal(h.client.status, "waiting");
});

test("automatic reauth: the option is asked 30 s before expires (at half the time left when shorter) and its token sent", async () => {
  const asked = [];
  const h = harness({ heartbeat: false, reauth: () => { asked.push(h.clock.now()); return Promise.resolve("token" + asked.length); } });
  const start = h.clock.now();
  const ws = arrive(h, welcomeWith({ expires: start + 120000 }));
  h.clock.advance(89999);
  assert.deepEqual(asked, []);
  h.clock.advance(1);
  assert.deepEqual(asked, [start + 90000]);
  await settle();
  const frame = ws.sent.at(-1);
  assert.deepEqual(frame, { type: "reauth", token: "token1", ref: frame.ref });
  ws.frame({ type: "reauthed", ref: frame.ref, expires: h.clock.now() + 40000 });   // a short one: renewed at half
  h.clock.advance(19999);
  assert.equal(asked.length, 1);
  h.clock.advance(1);
  assert.equal(asked.length, 2);
  await settle();
  assert.equal(ws.sent.at(-1).token, "token2");
  assert.equal(h.errors.length, 0);
});

test("automatic reauth: 5 s after the welcome or reauthed at the soonest (a clock ahead of the server's), and expiries beyond a timer's range", async () => {
  const asked = [];
  const h = harness({ heartbeat: false, reauth: () => { asked.push(h.clock.now()); return Promise.resolve("t" + asked.length); } });
  const ws = arrive(h, welcomeWith({ expires: h.clock.now() - 60000 }));   // past, by this client's clock
  h.clock.advance(4999);
  assert.equal(asked.length, 0);
  h.clock.advance(1);
  assert.equal(asked.length, 1);
  await settle();
  ws.frame({ type: "reauthed", ref: ws.sent.at(-1).ref, expires: h.clock.now() - 60000 });
  await settle();
  assert.equal(asked.length, 1, "not asked again at once");
  h.clock.advance(5000);
  assert.equal(asked.length, 2);
  await settle();
  const days40 = 40 * 24 * 3600 * 1000;
  ws.frame({ type: "reauthed", ref: ws.sent.at(-1).ref, expires: h.clock.now() + days40 });
  assert.ok(h.clock.nextDelay() <= 2147483647, "no timer longer than setTimeout takes");
  h.clock.advance(days40 - 30000 - 1);
  assert.equal(asked.length, 2);
  h.clock.advance(1);
  assert.equal(asked.length, 3);
});

test("automatic reauth that fails is reported; without a reauth option nothing is sent before expiry", async () => {
  const h = harness({ reauth: () => Promise.reject(new Error("signed out")) });
  const ws = arrive(h, welcomeWith({ expires: h.clock.now() + 10000 }));
  h.clock.advance(5000);
  await settle();
  assert.equal(h.errors.at(-1).code, "reauth");
  assert.match(h.errors.at(-1).message, /signed out/);

  const plain = harness();
  const other = arrive(plain, welcomeWith({ expires: plain.clock.now() + 10000 }));
  plain.clock.advance(20000);
  await settle();
  assert.deepEqual(other.sent.map((f) => f.type), ["hello"]);
});

test("a refused reauth: its promise rejects with unauthorized, and the close 4401 stops the client, reported once", async () => {
  const h = harness();
  const ws = bringLive(h);
  const answer = h.client.reauth("stolen");
  const ref = ws.sent.at(-1).ref;
  ws.frame({ type: "error", code: "unauthorized", message: "token revoked", ref });
  await assert.rejects(answer, (e) => e.code === "unauthorized" && /revoked/.test(e.message));
  assert.equal(h.errors.length, 0, "reported with the close");
  ws.serverClose(4401);
  assert.equal(h.client.status, "refused");
  assert.deepEqual(h.errors.map((e) => [e.code, e.closeCode]), [["unauthorized", 4401]]);
  assert.match(h.errors[0].message, /token revoked/);
  h.clock.advance(60000);
  assert.equal(h.net.sockets.length, 1);
  assert.equal(h.client.reconnect(), false, "refused is final");
});

test("with a reauth option, a hello refused (credentials that expired while away) gets one new token; a second refusal stops", async () => {
  let tokens = 0;
  const h = harness({ reauth: () => Promise.resolve("renewed" + ++tokens) });
  bringLive(h).serverClose(1006);
  h.clock.advance(h.clock.nextDelay());
  const refuse = (ws) => {
    ws.open();
    ws.frame({ type: "error", code: "unauthorized", message: "the credentials expired" });
    ws.serverClose(4401);
  };
  refuse(h.net.last());
  assert.equal(h.client.status, "waiting");
  await settle();
  assert.equal(tokens, 1);
  h.clock.advance(h.clock.nextDelay());
  const second = h.net.last();
  refuse(second);
  assert.equal(second.sent[0].token, "renewed1");
  assert.equal(h.client.status, "refused");
  assert.equal(tokens, 1, "not asked again for a token it has just given");
  assert.deepEqual(h.errors.map((e) => [e.code, e.closeCode]), [["unauthorized", 4401]]);

  // A refused reauth frame stops at once, option or not.
  const other = harness({ reauth: () => Promise.resolve("never") });
  const ws = bringLive(other);
  other.client.reauth("revoked").catch(() => {});
  ws.frame({ type: "error", code: "unauthorized", message: "token revoked", ref: ws.sent.at(-1).ref });
  ws.serverClose(4401);
  assert.equal(other.client.status, "refused");
});

// The server ends the session (4419 with no reauth option, 4403): the client stops with `status`, reports
// the error frame once with the close code, keeps the queue, does not reconnect on its own, and
// `reconnect(token)` connects again, resumes and sends the queue.
for (const c of [
  { close: 4419, code: "token_expired", message: "the credentials expired", status: "expired", token: "fresh-token" },
  { close: 4403, code: "disconnected", message: "removed from the team", status: "disconnected", token: undefined },
]) {
  test(c.close + ": the client stops " + c.status + ", says " + c.code + " once, keeps the queue; reconnect() resumes when asked", async () => {
    const h = harness();
    const ws = bringLive(h);
    const answer = h.client.send({ n: 1 });
    ws.frame({ type: "error", code: c.code, message: c.message });
    ws.serverClose(c.close);
    assert.equal(h.client.status, c.status);
    assert.deepEqual(h.statuses, ["live", c.status]);
    assert.deepEqual(h.errors.map((e) => [e.code, e.closeCode]), [[c.code, c.close]]);
    assert.match(h.errors[0].message, new RegExp(c.message));
    await assert.rejects(answer, (e) => e.code === "closed");
    await assert.rejects(h.client.send({ n: 2 }), (e) => e.code === "closed");
    h.clock.advance(60000);
    assert.equal(h.net.sockets.length, 1, "no reconnect on its own");
    assert.equal(JSON.parse(h.options.storage.getItem("queue")).queue.length, 1);
    assert.equal(h.client.reconnect(c.token), true);
    assert.equal(h.client.status, "connecting");
    const again = h.net.last();
    again.open();
    assert.equal(again.sent[0].token, c.token || "s3cret");
    assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
    again.frame(welcome());
    again.frame({ type: "patch", from: 41, version: 41 });
    assert.equal(h.client.status, "live");
    assert.deepEqual(again.commands().map((f) => f.seq), [1]);
    again.frame({ type: "ack", ref: again.commands()[0].ref, seq: 1, version: 42 });
    assert.equal(h.settled.at(-1).answer.version, 42, "answered through onSettled");
  });
}

test("4419 with a reauth option: a new token, then a reconnect that resumes; a reauth that fails stops expired", async () => {
  let tokens = 0;
  const h = harness({ reauth: () => Promise.resolve("renewed" + ++tokens) });
  const ws = bringLive(h);
  ws.frame({ type: "error", code: "token_expired", message: "the credentials expired" });
  ws.serverClose(4419);
  assert.equal(h.client.status, "waiting");
  await settle();
  assert.equal(tokens, 1);
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  assert.notEqual(again, ws);
  again.open();
  assert.equal(again.sent[0].token, "renewed1");
  assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
  assert.deepEqual(h.errors, [], "renewed quietly");

  const failing = harness({ reauth: () => { throw new Error("no session"); } });
  bringLive(failing).serverClose(4419);
  await settle();
  assert.equal(failing.client.status, "expired");
  assert.equal(failing.errors.at(-1).code, "token_expired");
  assert.match(failing.errors.at(-1).message, /no session/);
});

// ---- presence ----

const ANN = "c018bcfe56800-0123456789abcdef", BOB = "c018bcfe56a11-00000000000000ff", CAT = "c018bcfe56c00-1111111111111111";

test("presence: state replaces the list, joins and leaves change it; each change a new object and one onPresence", () => {
  const seen = [];
  const h = harness({ onPresence: (presence, change) => seen.push({ presence, change }) });
  assert.deepEqual(h.client.presence, {});
  const ws = bringLive(h);
  ws.frame({ type: "presence", state: { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } } });
  assert.deepEqual(h.client.presence, { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } });
  assert.deepEqual(seen[0].change, { joins: { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } }, leaves: [] });
  const before = h.client.presence;
  ws.frame({ type: "presence", joins: { [CAT]: { name: "Cat" } }, leaves: [BOB] });
  assert.deepEqual(h.client.presence, { [ANN]: { name: "Ann" }, [CAT]: { name: "Cat" } });
  assert.deepEqual(seen[1].change, { joins: { [CAT]: { name: "Cat" } }, leaves: [BOB] });
  assert.notEqual(h.client.presence, before, "a new object");
  assert.deepEqual(before, { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } }, "the old one unchanged");
  ws.frame({ type: "presence", joins: { [ANN]: { name: "Ann", away: true } } });   // a join replaces
  assert.deepEqual(h.client.presence[ANN], { name: "Ann", away: true });
  assert.deepEqual(seen[2].change, { joins: { [ANN]: { name: "Ann", away: true } }, leaves: [] });
  ws.frame({ type: "presence", state: { [CAT]: { name: "Cat" } } });   // a state replaces the whole list
  assert.deepEqual(h.client.presence, { [CAT]: { name: "Cat" } });
  assert.deepEqual(seen[3].change, { joins: {}, leaves: [ANN] });
  assert.equal(seen.length, 4);
  assert.equal(seen.at(-1).presence, h.client.presence);
});

test("presence frames are idempotent: a join of an entry held or a leave of one missing changes nothing and calls nothing", () => {
  const seen = [];
  const h = harness({ onPresence: (presence) => seen.push(presence) });
  const ws = bringLive(h);
  ws.frame({ type: "presence", state: { [ANN]: { name: "Ann" } } });
  const held = h.client.presence;
  const delta = { type: "presence", joins: { [BOB]: { name: "Bob" } }, leaves: [CAT] };
  ws.frame(delta);
  const after = h.client.presence;
  ws.frame(delta);
  ws.frame({ type: "presence", joins: { [ANN]: { name: "Ann" } } });
  ws.frame({ type: "presence", leaves: [CAT] });
  ws.frame({ type: "presence", state: { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } } });
  assert.equal(seen.length, 2);
  assert.notEqual(after, held);
  assert.equal(h.client.presence, after, "the same object: nothing changed");
  assert.deepEqual(after, { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } });
  assert.equal(h.client.status, "live");
});

test("presence is emptied when the connection drops, and the state after the next welcome restores it", () => {
  const seen = [];
  const h = harness({ onPresence: (presence, change) => seen.push({ presence, change }) });
  const ws = bringLive(h);
  ws.frame({ type: "presence", state: { [ANN]: { name: "Ann" }, [BOB]: { name: "Bob" } } });
  ws.serverClose(1001);
  assert.deepEqual(h.client.presence, {});
  assert.deepEqual(seen.at(-1).change, { joins: {}, leaves: [ANN, BOB] });
  h.clock.advance(h.clock.nextDelay());
  const again = bringLive(h, { type: "patch", from: 41, version: 41 });
  assert.deepEqual(h.client.presence, {});
  again.frame({ type: "presence", state: { [ANN]: { name: "Ann" } } });
  assert.deepEqual(h.client.presence, { [ANN]: { name: "Ann" } });
  assert.equal(seen.length, 3);
  h.client.close();
  assert.deepEqual(h.client.presence, {}, "close empties it too");

  // A hook that closes the client when presence empties, on a 4419 with a reauth option: it stays closed.
  let asked = 0;
  const closing = harness({ reauth: () => { asked++; return Promise.resolve("t"); }, onPresence: (presence) => { if (Object.keys(presence).length === 0) closing.client.close(); } });
  const live = bringLive(closing);
  live.frame({ type: "presence", state: { [ANN]: { name: "Ann" } } });
  live.serverClose(4419);
  assert.equal(closing.client.status, "closed");
  assert.equal(asked, 0);
});

test("a presence frame out of place or of the wrong shape drops the connection", () => {
  for (const frame of [
    { type: "presence", state: [ANN] },
    { type: "presence", joins: [ANN] },
    { type: "presence", leaves: ANN },
    { type: "presence", leaves: [1] },
  ]) {
    const h = harness();
    bringLive(h).frame(frame);
    assert.equal(h.client.status, "waiting", JSON.stringify(frame));
    assert.equal(h.errors.at(-1).code, "dropped");
  }
  const early = harness();
  const ws = early.net.last();
  ws.open();
  ws.frame({ type: "presence", state: {} });
  assert.equal(early.client.status, "waiting", "before the welcome");
});

// ---- heartbeats ----

test("heartbeat: a ping after 25 s without a frame; any frame puts it off; a pong is taken silently", () => {
  const h = harness();
  const ws = bringLive(h);
  const pings = () => ws.sent.filter((f) => f.type === "ping").length;
  h.clock.advance(20000);
  ws.frame({ type: "patch", from: 41, version: 42, set: { title: "Weekend" } });
  h.clock.advance(24999);
  assert.equal(pings(), 0, "25 s from the last frame, not from the first");
  h.clock.advance(1);
  assert.equal(pings(), 1);
  assert.deepEqual(ws.sent.at(-1), { type: "ping" });
  h.clock.advance(3000);
  ws.frame({ type: "pong" });
  h.clock.advance(20000);
  assert.equal(h.client.status, "live", "answered: no drop");
  assert.equal(pings(), 1);
  h.clock.advance(5000);
  assert.equal(pings(), 2, "25 s after the pong");
  assert.deepEqual(h.errors, []);
  assert.equal(h.views.length, 2);
});

test("heartbeat: nothing within 10 s of the ping drops the connection, and the client reconnects and resumes", () => {
  const h = harness();
  const ws = bringLive(h);
  h.clock.advance(25000);
  assert.deepEqual(ws.sent.at(-1), { type: "ping" });
  h.clock.advance(9999);
  assert.equal(ws.closedByClient, null);
  h.clock.advance(1);
  assert.equal(ws.closedByClient, 1000);
  assert.equal(h.client.status, "waiting");
  assert.equal(h.errors.at(-1).code, "dropped");
  h.clock.advance(h.clock.nextDelay());
  const again = h.net.last();
  assert.notEqual(again, ws);
  again.open();
  assert.deepEqual(again.sent[0].resume, { stream: STREAM, version: 41 });
});

test("heartbeat timings are options; false turns the heartbeat off", () => {
  const h = harness({ heartbeat: { idle: 1000, timeout: 500 } });
  const ws = bringLive(h);
  h.clock.advance(1000);
  assert.deepEqual(ws.sent.at(-1), { type: "ping" });
  h.clock.advance(500);
  assert.equal(h.client.status, "waiting");

  const off = harness({ heartbeat: false });
  const quiet = bringLive(off);
  off.clock.advance(120000);
  assert.deepEqual(quiet.sent.map((f) => f.type), ["hello"]);
  assert.equal(off.client.status, "live");
});

test("a frame of an unknown type is reported (unknown_frame) and ignored: the connection goes on", () => {
  const h = harness();
  const ws = bringLive(h);
  ws.frame({ type: "weather", sunny: true });
  assert.equal(h.errors.at(-1).code, "unknown_frame");
  assert.equal(h.client.status, "live");
  assert.equal(ws.closedByClient, null);
  ws.frame({ type: "patch", from: 41, version: 42, set: { title: "Weekend" } });
  assert.equal(h.client.view.title, "Weekend");
});
