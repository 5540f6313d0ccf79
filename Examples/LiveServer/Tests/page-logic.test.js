// Checks the page's logic that has no DOM (index.html, from `function planListPatch` to
// `function startBoard`) in node: row plans for the patches the client applies, the pending commands read
// from the client's stored queue (acks landing, refusals), the overlay they draw, the connection state
// shown, and reading share links. The list patching itself is stillwater-live.js's, loaded from the
// adapter's resources, so the plans are checked against the lists the client makes.
// Run: node Examples/LiveServer/Tests/page-logic.test.js   (node 18 or later, no packages)
"use strict";
const fs = require("fs");
const path = require("path");
const assert = require("assert");
const client = require("../../../Sources/StillwaterHummingbird/Resources/stillwater-live.js");

const page = fs.readFileSync(path.join(__dirname, "../Sources/LiveServerCore/Public/index.html"), "utf8");
assert(page.includes('<script src="/stillwater-live.js"></script>'), "the page does not load the library's client");
const start = page.indexOf("function planListPatch");
const end = page.indexOf("\nfunction startBoard");
assert(start >= 0 && end > start, "the logic section (planListPatch .. startBoard) is not in index.html");
const section = page.slice(start, end);
for (const global of ["document", "window", "location", "localStorage", "sessionStorage", "WebSocket", "setTimeout", "StillwaterLive"]) {
  assert(!new RegExp("\\b" + global + "\\b").test(section.replace(/\/\/.*$/gm, "")), "the logic section uses " + global);
}
const names = ["planListPatch", "commandParts", "createPending", "pendingOverlay", "pageState", "readLocation",
  "parseShareInput", "socketURL", "nodeHosts", "shareLink", "presenceList", "cleanName", "tokenKey", "queueKey"];
const L = new Function(section + "\nreturn {" + names.join(", ") + "};")();

let passed = 0, failed = 0;
function test(name, body) {
  try { body(); passed++; }
  catch (error) { failed++; console.log("FAIL " + name + ": " + (error && error.stack || error)); }
}

// A seeded generator, so a failure repeats.
function random(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}

// A ListPatch from one list of {id, text, done} to another, in the shape the server sends: the items
// kept in place are a longest increasing run (so the moves are as few as can be), deletes and updates
// are old indexes, inserts and move targets new ones, elements in ascending new index.
function diff(old, next) {
  const oldIndex = new Map(old.map((item, i) => [item.id, i]));
  const newIds = new Set(next.map((item) => item.id));
  const deletes = old.map((item, i) => (newIds.has(item.id) ? -1 : i)).filter((i) => i >= 0);
  const common = next.map((item, n) => ({ n, o: oldIndex.get(item.id) })).filter((x) => x.o !== undefined);
  // Longest increasing subsequence of the old indexes, in new order.
  const tails = [], prev = new Array(common.length).fill(-1), tailAt = [];
  common.forEach((x, k) => {
    let lo = 0, hi = tails.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (common[tails[mid]].o < x.o) lo = mid + 1; else hi = mid; }
    prev[k] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = k; tailAt[lo] = k;
  });
  const stay = new Set();
  for (let k = tails.length ? tails[tails.length - 1] : -1; k >= 0; k = prev[k]) stay.add(common[k].n);
  const inserts = [], moves = [], updates = [], elementAt = new Map();
  next.forEach((item, n) => {
    const o = oldIndex.get(item.id);
    if (o === undefined) { inserts.push(n); elementAt.set(n, item); }
    else if (!stay.has(n)) { moves.push([o, n]); elementAt.set(n, item); }
    else if (JSON.stringify(old[o]) !== JSON.stringify(item)) { updates.push(o); elementAt.set(n, item); }
  });
  const elements = [...elementAt.keys()].sort((a, b) => a - b).map((n) => elementAt.get(n));
  const changes = {};
  if (deletes.length) changes.deletes = deletes;
  if (inserts.length) changes.inserts = inserts;
  if (moves.length) changes.moves = moves;
  if (updates.length) changes.updates = updates;
  return { changes, elements };
}

// Plays a plan on an array of row ids the way the page plays it on the DOM; counts the rows it touches.
function playPlan(rowIds, plan) {
  let rows = rowIds.slice();
  let touched = 0;
  const gone = new Set(plan.remove.concat(plan.detach));
  rows = rows.filter((id) => !gone.has(id));
  for (const { index, id } of plan.arrive) { rows.splice(index, 0, id); touched++; }
  return { rows, touched };
}

test("planListPatch: random patches put every row in place, touching only inserts and moves", () => {
  const next = random(7);
  for (let round = 0; round < 800; round++) {
    const count = Math.floor(next() * 12);
    const old = Array.from({ length: count }, (_, i) => ({ id: "i" + i, text: "t" + i, done: next() < 0.3 }));
    let fresh = 100;
    let target = old.filter(() => next() > 0.25).map((item) => (next() < 0.2 ? { ...item, done: !item.done } : item));
    target.sort(() => next() - 0.5);
    for (let k = Math.floor(next() * 4); k > 0; k--) {
      target.splice(Math.floor(next() * (target.length + 1)), 0, { id: "i" + fresh++, text: "new", done: false });
    }
    const patch = diff(old, target);
    const items = client.applyListPatch(old, patch);
    assert.deepStrictEqual(items, target);
    const plan = L.planListPatch(old, patch, items);
    const played = playPlan(old.map((item) => item.id), plan);
    assert.deepStrictEqual(played.rows, target.map((item) => item.id));
    assert.strictEqual(played.touched, (patch.changes.inserts || []).length + (patch.changes.moves || []).length);
    assert.deepStrictEqual(plan.refresh, patch.elements.map((e) => e.id));
  }
});

test("planListPatch: moving the first of five rows to the end takes out and puts back that row only", () => {
  const old = ["a", "b", "c", "d", "e"].map((id) => ({ id, text: id, done: false }));
  const patch = { changes: { moves: [[0, 4]] }, elements: [old[0]] };
  const plan = L.planListPatch(old, patch, client.applyListPatch(old, patch));
  assert.deepStrictEqual(plan.detach, ["a"]);
  assert.deepStrictEqual(plan.arrive, [{ index: 4, id: "a" }]);
  assert.deepStrictEqual(plan.remove, []);
});

test("commandParts: a command's kind and fields, nothing for junk", () => {
  assert.deepStrictEqual(L.commandParts({ move: { id: "i1", to: 0 } }), { kind: "move", fields: { id: "i1", to: 0 } });
  assert.deepStrictEqual(L.commandParts({ setTitle: { title: "T" } }), { kind: "setTitle", fields: { title: "T" } });
  assert.deepStrictEqual(L.commandParts(null), { kind: undefined, fields: {} });
  assert.deepStrictEqual(L.commandParts("add"), { kind: undefined, fields: {} });
});

// The queue as the client hands it over (`queued`, `onQueue`): a list of {cid, command}.
const stored = (...entries) => entries.map(([cid, command]) => ({ cid, command }));

test("pending: mirrors the client's queue, in order, and skips junk", () => {
  const box = L.createPending();
  assert.strictEqual(box.count, 0);
  assert.strictEqual(box.newest(), null);
  box.mirror(stored(["c1", { add: { text: "one" } }], ["c2", { toggle: { id: "i1" } }]));
  assert.strictEqual(box.count, 2);
  assert.strictEqual(box.newest(), "c2");
  assert.deepStrictEqual(box.pending().map((e) => e.cid), ["c1", "c2"]);
  box.mirror([null, { cid: 5, command: {} }, { cid: "c3" }, { cid: "c4", command: { delete: { id: "i2" } } }]);
  assert.deepStrictEqual(box.pending().map((e) => e.cid), ["c4"]);
  box.mirror("not a list");
  assert.strictEqual(box.count, 0);
});

test("pending: an ack lands when its version is shown; one already shown lands at once", () => {
  const box = L.createPending();
  box.mirror(stored(["c1", { add: { text: "one" } }], ["c2", { add: { text: "two" } }]));
  box.mirror(stored(["c2", { add: { text: "two" } }]));   // the client settled c1: it left the queue first
  assert.deepStrictEqual(box.settle("c1", 8, 7), { add: { text: "one" } });
  assert.strictEqual(box.count, 1);
  assert.deepStrictEqual(box.pending().map((e) => e.command.add.text), ["one", "two"], "still drawn until version 8 is shown");
  assert.strictEqual(box.shown(7), false);
  assert.strictEqual(box.shown(8), true);
  assert.deepStrictEqual(box.pending().map((e) => e.command.add.text), ["two"]);
  assert.strictEqual(box.settle("c1", 9, 8), null, "a second answer for the cid changes nothing");
  box.mirror([]);
  box.settle("c2", 8, 9);
  assert.deepStrictEqual(box.pending(), []);
});

test("pending: a refusal (no version) and a new stream forget the command", () => {
  const box = L.createPending();
  box.mirror(stored(["c1", { rename: { id: "i1", text: "x" } }], ["c2", { add: { text: "y" } }]));
  box.mirror([]);
  assert.deepStrictEqual(box.settle("c1", null, 3), { rename: { id: "i1", text: "x" } });
  box.settle("c2", 12, 3);
  assert.strictEqual(box.pending().length, 1);
  box.forgetLanding();
  assert.deepStrictEqual(box.pending(), []);
});

test("pendingOverlay: toggles flip in pairs, the last rename wins, adds keep their order", () => {
  const entries = [
    { toggle: { id: "i1" } }, { rename: { id: "i1", text: "A" } }, { rename: { id: "i1", text: "B" } },
    { toggle: { id: "i2" } }, { toggle: { id: "i2" } }, { delete: { id: "i3" } }, { move: { id: "i4", to: 0 } },
    { add: { text: "first" } }, { add: { text: "second" } }, { setTitle: { title: "T" } },
  ].map((command, index) => ({ cid: index === 7 ? null : "c" + index, command }));
  const o = L.pendingOverlay(entries);
  assert.deepStrictEqual(o.rows.get("i1"), { flip: true, text: "B", deleting: false, moving: false });
  assert.strictEqual(o.rows.get("i2").flip, false);
  assert.strictEqual(o.rows.get("i3").deleting, true);
  assert.strictEqual(o.rows.get("i4").moving, true);
  assert.deepStrictEqual(o.adds, [{ key: "landing-7", text: "first" }, { key: "c8", text: "second" }]);
  assert.strictEqual(o.title, "T");
});

test("pageState: live is connected; after a wait, connecting stays reconnecting", () => {
  assert.strictEqual(L.pageState("connecting", "connecting"), "connecting");
  assert.strictEqual(L.pageState("live", "connecting"), "connected");
  assert.strictEqual(L.pageState("waiting", "connected"), "reconnecting");
  assert.strictEqual(L.pageState("connecting", "reconnecting"), "reconnecting");
  assert.strictEqual(L.pageState("live", "reconnecting"), "connected");
  assert.strictEqual(L.pageState("refused", "connected"), "refused");
  assert.strictEqual(L.pageState("failed", "connecting"), "failed");
});

test("nodeHosts: the page's own host first, then the cluster's other nodes, each once", () => {
  assert.deepStrictEqual(L.nodeHosts("?team=alpha", "a:1"), ["a:1"]);
  assert.deepStrictEqual(L.nodeHosts("?team=alpha&nodes=b:2,a:1,%20c:3%20,,bad/host", "a:1"), ["a:1", "b:2", "c:3"]);
});

test("readLocation and parseShareInput", () => {
  assert.deepStrictEqual(L.readLocation("?team=alpha", "#token=tok-1"), { team: "alpha", token: "tok-1" });
  assert.deepStrictEqual(L.readLocation("", ""), { team: null, token: null });
  assert.deepStrictEqual(L.readLocation("?team=a%20b", "#x=1&token=t%2Bu"), { team: "a b", token: "t+u" });
  assert.deepStrictEqual(L.parseShareInput("  http://h:8080/?team=beta#token=tok-b  ", "alpha"), { team: "beta", token: "tok-b" });
  assert.deepStrictEqual(L.parseShareInput("/?team=beta#token=tok-b", null), { team: "beta", token: "tok-b" });
  assert.deepStrictEqual(L.parseShareInput("https://h/#token=tok-a", "alpha"), { team: "alpha", token: "tok-a" });
  assert.deepStrictEqual(L.parseShareInput("tok-a", "alpha"), { team: "alpha", token: "tok-a" });
  assert(L.parseShareInput("", "alpha").error);
  assert(L.parseShareInput("tok a", "alpha").error);
  assert(L.parseShareInput("tok-a", null).error);
  assert(L.parseShareInput("http://h/?team=beta", "alpha").error);
  assert(L.parseShareInput("http://h/#token=t", null).error);
});

test("socketURL and shareLink", () => {
  assert.strictEqual(L.socketURL("http:", "127.0.0.1:8080", "alpha"), "ws://127.0.0.1:8080/live?team=alpha");
  assert.strictEqual(L.socketURL("https:", "h", "a b/c"), "wss://h/live?team=a%20b%2Fc");
  assert.strictEqual(L.shareLink("http://h", "/", "alpha", "t+1"), "http://h/?team=alpha#token=t%2B1");
  assert.strictEqual(L.tokenKey("alpha"), "stillwater.token.alpha");
  assert.strictEqual(L.queueKey("alpha"), "stillwater.queue.alpha");
});

test("presenceList: who is on the board, sorted by name, a viewer marked, a bad entry shown as someone", () => {
  assert.deepStrictEqual(L.presenceList({}), []);
  assert.deepStrictEqual(L.presenceList(null), []);
  assert.deepStrictEqual(L.presenceList({
    "c2": { name: "Vic", role: "viewer" }, "c1": { name: "Ann", role: "member" }, "c3": { name: "Ann", role: "viewer" },
    "c0": "not an object", "c4": { role: "member" },
  }), [
    { id: "c1", name: "Ann", role: "member" }, { id: "c3", name: "Ann", role: "viewer" },
    { id: "c0", name: "someone", role: "member" }, { id: "c4", name: "someone", role: "member" },
    { id: "c2", name: "Vic", role: "viewer" },
  ]);
});

test("cleanName: trimmed, no control characters, at most 40 characters", () => {
  assert.strictEqual(L.cleanName("  Ann  "), "Ann");
  assert.strictEqual(L.cleanName("A\u0000n\nn"), "Ann");
  assert.strictEqual(L.cleanName("   "), null);
  assert.strictEqual(L.cleanName(undefined), null);
  assert.strictEqual(L.cleanName("x".repeat(50)), "x".repeat(40));
});

console.log("page-logic: " + passed + " passed, " + failed + " failed");
process.exit(failed ? 1 : 0);
