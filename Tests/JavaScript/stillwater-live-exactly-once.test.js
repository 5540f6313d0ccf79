// A randomized test of Sources/StillwaterHummingbird/Resources/stillwater-live.js against a model server
// that numbers commands as Sources/StillwaterLive/StillwaterLive.docc/Protocol.md says (per client id:
// the next expected number, duplicates, out_of_order, recorded refusals, unavailable and window_full,
// bad_command that uses no number; a ping answered with a pong), with dropped connections (answers lost,
// commands taken or not), sessions the server ends (4403; the page reconnects when the user asks) and
// page reloads on the same storage. Run with `node --test Tests/JavaScript/`.
//
// Checked: no command is applied twice; an acknowledged command was applied (or, for a duplicate, decided);
// a refused one was not applied; and once the faults stop, every command is settled and every command
// that was neither refused, bad nor settled with client_expired (the server forgets ids at random) was
// applied exactly once.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const Live = require(path.join(__dirname, "../../Sources/StillwaterHummingbird/Resources/stillwater-live.js"));
const { fakeClock, fakeStorage } = require("./fakes.js");

function seeded(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}


/** The server: one log of numbered and cid-only commands, and the sockets of its clients. */
function modelServer(random, faults) {
  const clients = new Map();   // id → {seq, version, refusal}
  const forgotten = new Set(); // ids the server no longer remembers
  const cids = new Map();      // cid → version
  const applied = new Map();   // command tag → how many times applied
  let version = 41, issued = 0;
  const sockets = [];
  const stats = { duplicate: 0, hello_with_client: 0 };   // and a count per error code

  function decide(command) {
    version++;
    if (command.reject) return { refusal: "refused " + command.tag, version };
    applied.set(command.tag, (applied.get(command.tag) || 0) + 1);
    return { refusal: null, version };
  }

  function handle(socket, frame) {
    const out = (f) => {
      if (f.type === "error") stats[f.code] = (stats[f.code] || 0) + 1;
      if (f.duplicate) stats.duplicate++;
      socket.outbox.push(f);
    };
    if (frame.type === "hello") {
      if (frame.client) stats.hello_with_client++;
      socket.client = frame.client || "c" + (0x18bcfe56800 + issued).toString(16).padStart(12, "0") + "-" + (issued++).toString(16).padStart(16, "0");
      out({ type: "welcome", protocol: 1, stream: "s-1", window: 8, client: socket.client });
      out({ type: "snapshot", stream: "s-1", version, view: { n: version } });
      return;
    }
    if (frame.type === "ping") { stats.pong = (stats.pong || 0) + 1; out({ type: "pong" }); return; }
    const echo = { ref: frame.ref };
    if (frame.cid != null) echo.cid = frame.cid;
    if (frame.seq != null) echo.seq = frame.seq;
    if (frame.command.bad) { out({ type: "error", code: "bad_command", message: "does not decode", ref: frame.ref }); return; }
    if (faults() && random() < 0.15) {
      out(Object.assign({ type: "error", code: random() < 0.5 ? "unavailable" : "window_full", message: "later", retry: true }, echo));
      return;
    }
    if (frame.seq != null && forgotten.has(socket.client)) {
      out(Object.assign({ type: "error", code: "client_expired", message: "start again without the id" }, echo));
      return;
    }
    if (frame.seq != null) {
      const record = clients.get(socket.client) || { seq: 0, version: 0, refusal: null };
      const expected = record.seq + 1;
      if (frame.seq > expected) {
        out(Object.assign({ type: "error", code: "out_of_order", message: "next is " + expected, expected, retry: true }, echo));
      } else if (frame.seq < expected) {
        if (frame.seq === record.seq && record.refusal) out(Object.assign({ type: "error", code: "rejected", message: record.refusal }, echo));
        else out(Object.assign({ type: "ack", version: record.version, duplicate: true }, echo));
      } else {
        const decision = decide(frame.command);
        clients.set(socket.client, { seq: frame.seq, version: decision.version, refusal: decision.refusal });
        if (decision.refusal) out(Object.assign({ type: "error", code: "rejected", message: decision.refusal }, echo));
        else out(Object.assign({ type: "ack", version: decision.version }, echo));
      }
      return;
    }
    if (cids.has(frame.cid)) { out(Object.assign({ type: "ack", version: cids.get(frame.cid), duplicate: true }, echo)); return; }
    const decision = decide(frame.command);
    cids.set(frame.cid, decision.version);
    if (decision.refusal) out(Object.assign({ type: "error", code: "rejected", message: decision.refusal }, echo));
    else out(Object.assign({ type: "ack", version: decision.version }, echo));
  }

  class FakeSocket {
    constructor() { this.readyState = 0; this.inbox = []; this.outbox = []; sockets.push(this); }
    send(text) { assert.equal(this.readyState, 1); this.inbox.push(JSON.parse(text)); }
    close() { this.readyState = 3; }
  }

  return {
    FakeSocket, applied, sockets, stats,
    /** Forgets the id of the newest connection (as if unseen for longer than the retention). */
    forget() { const s = sockets[sockets.length - 1]; if (s && s.client) { stats.forgets = (stats.forgets || 0) + 1; forgotten.add(s.client); clients.delete(s.client); } },
    live: () => sockets.filter((s) => s.readyState !== 3),
    open(socket) { socket.readyState = 1; socket.onopen && socket.onopen({}); },
    process(socket) { if (socket.inbox.length) handle(socket, socket.inbox.shift()); },
    deliver(socket) { if (socket.outbox.length && socket.onmessage) socket.onmessage({ data: JSON.stringify(socket.outbox.shift()) }); },
    /** Ends the session as `hub.disconnect` does: the frames waiting go first, then the error and 4403. */
    disconnect(socket) {
      stats.disconnected = (stats.disconnected || 0) + 1;
      while (socket.outbox.length && socket.onmessage) socket.onmessage({ data: JSON.stringify(socket.outbox.shift()) });
      socket.onmessage && socket.onmessage({ data: JSON.stringify({ type: "error", code: "disconnected", message: "removed from the room" }) });
      socket.readyState = 3;
      socket.onclose && socket.onclose({ code: 4403, reason: "" });
    },
    drop(socket, taken) {
      for (let i = 0; i < taken && socket.inbox.length; i++) handle(socket, socket.inbox.shift());
      socket.readyState = 3;
      socket.onclose && socket.onclose({ code: 1006, reason: "" });
    },
  };
}

/**
 * One randomized run. With `tabs`, a page is sometimes opened beside the others on the same storage
 * (the newest owns it; the others go on in memory once they notice); else a new page replaces the owner
 * (a reload).
 */
function run(seed, tabs) {
  const random = seeded(seed);
  let faulty = true;
  const server = modelServer(random, () => faulty);
  const clock = fakeClock();
  const storage = fakeStorage();
  const outcomes = new Map();   // cid → [{code: an error code or "ack", duplicate}], in the order settled
  const commands = new Map();   // cid → command
  let cidCount = 0, tagCount = 0;
  const connectClient = () => Live.connect("wss://model/live", {
    WebSocket: server.FakeSocket, storage, storageKey: "q", random,
    setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout, now: clock.now,
    newCid: () => "k" + ++cidCount,
    onSettled: (cid, error, answer) => {
      const list = outcomes.get(cid) || [];
      list.push({ code: error ? error.code : "ack", duplicate: answer && answer.duplicate });
      outcomes.set(cid, list);
    },
  });
  let pages = [connectClient()];   // the last one loaded the storage last
  const step = () => {
    const r = random();
    const sockets = server.live();
    const socket = sockets[Math.floor(random() * sockets.length)];
    if (socket && socket.readyState === 0) { server.open(socket); return; }
    if (r < 0.25) {
      const tag = "t" + ++tagCount;
      const command = { tag, reject: random() < 0.1, bad: random() < 0.03 };
      const before = cidCount;
      pages[Math.floor(random() * pages.length)].send(command).catch(() => {});
      if (cidCount > before) commands.set("k" + cidCount, command);
    } else if (r < 0.5) { if (socket) server.process(socket); }
    else if (r < 0.8) { if (socket) server.deliver(socket); }
    else if (r < 0.84) { if (socket && faulty) server.drop(socket, Math.floor(random() * 3)); }
    else if (r < 0.842) { if (faulty) server.forget(); }
    else if (r < 0.845) { if (socket && faulty) server.disconnect(socket); }
    else if (r < 0.848) { for (const page of pages) if (page.status === "disconnected") page.reconnect(); }
    else if (r < 0.86) {
      if (!faulty) return;
      if (tabs && pages.length < 3 && random() < 0.5) { pages.push(connectClient()); return; }
      const owner = pages.pop();   // a reload of the page that owns the storage
      owner.close();
      pages.push(connectClient());
    } else clock.advance(Math.floor(random() * 800));
  };
  for (let i = 0; i < 3000; i++) step();
  faulty = false;
  const pending = () => pages.reduce((sum, page) => sum + page.pending, 0);
  for (let i = 0; i < 40000 && pending() > 0; i++) {
    for (const page of pages) if (page.status === "disconnected") page.reconnect();   // the user asks
    const socket = server.live().find((s) => s.readyState === 0 || s.inbox.length || s.outbox.length);
    if (!socket) { clock.advance(1000); continue; }
    if (socket.readyState === 0) server.open(socket);
    else if (socket.inbox.length) server.process(socket);
    else server.deliver(socket);
  }
  assert.equal(pending(), 0, "every command settled once the faults stop");
  for (const [tag, times] of server.applied) assert.equal(times, 1, tag + " applied " + times + " times");
  let superseded = 0;
  for (const [cid, command] of commands) {
    const list = outcomes.get(cid) || [];
    // A page that lost the storage to another rejects the commands it had stored with `superseded`;
    // the owner settles them.
    const handedOver = list.filter((o) => o.code === "superseded").length;
    superseded += handedOver;
    const final = list.filter((o) => o.code !== "superseded");
    assert.equal(final.length, 1, cid + " settled " + JSON.stringify(list));
    const result = final[0];
    const times = server.applied.get(command.tag) || 0;
    if (result.code === "client_expired") assert.ok(times <= 1);
    else if (command.bad) assert.equal(result.code, "bad_command");
    else if (command.reject) {
      assert.equal(times, 0);
      assert.ok(result.code === "rejected" || (result.code === "ack" && result.duplicate), cid + ": " + JSON.stringify(result));
    } else {
      assert.equal(result.code, "ack", cid + " " + JSON.stringify(result));
      assert.equal(times, 1, command.tag + " applied " + times + " times");
    }
  }
  assert.ok(commands.size > 100);
  // The run went through the paths it is for.
  for (const what of ["duplicate", "hello_with_client", "out_of_order", "unavailable", "window_full", "rejected", "bad_command", "client_expired", "disconnected"]) {
    assert.ok(server.stats[what] > 0, "no " + what + " in this run: " + JSON.stringify(server.stats));
  }
  if (tabs) assert.ok(superseded > 0, "no command was handed over");
  if (process.env.STILLWATER_LIVE_STATS) console.log(seed, tabs, superseded, JSON.stringify(server.stats), commands.size, server.sockets.length);
}

for (const seed of [1, 2, 3, 4, 5, 6]) {
  test("randomized: drops, reloads, retries, refusals and bad commands never apply a command twice or lose one (seed " + seed + ")", () => run(seed, false));
}

for (const seed of [11, 12, 13, 14]) {
  test("randomized, with pages open side by side on one storage key (seed " + seed + ")", () => run(seed, true));
}
