// Checks the page's logic that has no DOM (index.html, from `function applyListPatch` to
// `function startBoard`) in node: patch planning against the rows it moves, the outbox (queue, acks,
// retries, drops), the pending overlay, backoff, command ids, and reading share links.
// Run: node Examples/LiveServer/Tests/page-logic.test.js   (node 18 or later, no packages)
"use strict";
const fs = require("fs");
const path = require("path");
const assert = require("assert");

const page = fs.readFileSync(path.join(__dirname, "../Sources/LiveServerCore/Public/index.html"), "utf8");
const start = page.indexOf("function applyListPatch");
const end = page.indexOf("\nfunction startBoard");
assert(start >= 0 && end > start, "the logic section (applyListPatch .. startBoard) is not in index.html");
const section = page.slice(start, end);
for (const global of ["document", "window", "location", "localStorage", "sessionStorage", "WebSocket", "setTimeout"]) {
  assert(!new RegExp("\\b" + global + "\\b").test(section.replace(/\/\/.*$/gm, "")), "the logic section uses " + global);
}
const names = ["applyListPatch", "planListPatch", "createOutbox", "pendingOverlay", "backoffDelay", "cidFromBytes",
  "isCid", "readLocation", "parseShareInput", "socketURL", "nodeHosts", "shareLink", "tokenKey", "queueKey"];
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
    const plan = L.planListPatch(old, patch);
    assert.deepStrictEqual(plan.items, target);
    const played = playPlan(old.map((item) => item.id), plan);
    assert.deepStrictEqual(played.rows, target.map((item) => item.id));
    assert.strictEqual(played.touched, (patch.changes.inserts || []).length + (patch.changes.moves || []).length);
    assert.deepStrictEqual(plan.refresh, patch.elements.map((e) => e.id));
  }
});

test("planListPatch: a patch that does not fit throws", () => {
  assert.throws(() => L.planListPatch([{ id: "a", text: "1", done: false }], { changes: { deletes: [1] }, elements: [] }));
  assert.throws(() => L.planListPatch([], { changes: { moves: [[0, 0]] }, elements: [{ id: "b", text: "", done: false }] }));
});

test("planListPatch: moving the first of five rows to the end takes out and puts back that row only", () => {
  const old = ["a", "b", "c", "d", "e"].map((id) => ({ id, text: id, done: false }));
  const plan = L.planListPatch(old, { changes: { moves: [[0, 4]] }, elements: [old[0]] });
  assert.deepStrictEqual(plan.detach, ["a"]);
  assert.deepStrictEqual(plan.arrive, [{ index: 4, id: "a" }]);
  assert.deepStrictEqual(plan.remove, []);
});

const add = (text, cid) => ({ type: "add", text, cid: cid || L.cidFromBytes(new Uint8Array(16).map((_, i) => i + text.length)) });

test("outbox: sends each command once per connection, in order, with new refs after a drop", () => {
  const box = L.createOutbox();
  box.add(add("one", "cid-one-aaaaaaaaaaaa"));
  box.add(add("two", "cid-two-aaaaaaaaaaaa"));
  const first = box.due(0);
  assert.deepStrictEqual(first.map((f) => [f.text, f.ref, f.cid]), [["one", 1, "cid-one-aaaaaaaaaaaa"], ["two", 2, "cid-two-aaaaaaaaaaaa"]]);
  assert.deepStrictEqual(box.due(0), [], "nothing is sent twice on one connection");
  box.disconnected();
  const again = box.due(0);
  assert.deepStrictEqual(again.map((f) => [f.text, f.ref, f.cid]), [["one", 3, "cid-one-aaaaaaaaaaaa"], ["two", 4, "cid-two-aaaaaaaaaaaa"]]);
  assert.strictEqual(box.count, 2);
});

test("outbox: an ack removes the command, which lands when its version is shown", () => {
  const box = L.createOutbox();
  box.add(add("one", "cid-one-aaaaaaaaaaaa"));
  const [frame] = box.due(0);
  assert.strictEqual(box.ack(frame.ref, 8, 7).text, "one");
  assert.strictEqual(box.count, 0);
  assert.deepStrictEqual(box.pending().map((c) => c.text), ["one"], "still drawn until version 8 is shown");
  assert.strictEqual(box.shown(7), false);
  assert.strictEqual(box.shown(8), true);
  assert.deepStrictEqual(box.pending(), []);
  assert.strictEqual(box.ack(frame.ref, 9, 8), null, "a second ack for the ref changes nothing");
});

test("outbox: an ack for a version already shown lands at once", () => {
  const box = L.createOutbox();
  box.add(add("one", "cid-one-aaaaaaaaaaaa"));
  const [frame] = box.due(0);
  box.ack(frame.ref, 8, 9);
  assert.deepStrictEqual(box.pending(), []);
});

test("outbox: an error removes the command; an error with retry holds it back, then resends it", () => {
  const box = L.createOutbox();
  box.add(add("bad", "cid-bad-aaaaaaaaaaaa"));
  box.add(add("busy", "cid-busy-aaaaaaaaaaa"));
  const [bad, busy] = box.due(1000);
  assert.strictEqual(box.refuse(bad.ref).text, "bad");
  assert.strictEqual(box.retryLater(busy.ref, 1000, 0.5).text, "busy");
  assert.strictEqual(box.count, 1);
  assert.strictEqual(box.nextRetry(), 1500);
  assert.deepStrictEqual(box.due(1499), []);
  const [again] = box.due(1500);
  assert.strictEqual(again.cid, "cid-busy-aaaaaaaaaaa");
  assert.strictEqual(box.retryLater(again.ref, 2000, 0.5) !== null, true);
  assert.strictEqual(box.nextRetry(), 3000, "the second retry waits twice as long");
  assert.strictEqual(box.nextRetry() !== Infinity, true);
});

test("outbox: saved commands come back queued, and junk is skipped", () => {
  const box = L.createOutbox();
  box.add(add("kept", "cid-kept-aaaaaaaaaaa"));
  box.due(0);
  const saved = JSON.parse(JSON.stringify(box.saved()));
  const restored = L.createOutbox(saved.concat([null, { type: "add" }, { type: "add", cid: "short" }]));
  assert.strictEqual(restored.count, 1);
  assert.deepStrictEqual(restored.due(0).map((f) => [f.text, f.cid, f.ref]), [["kept", "cid-kept-aaaaaaaaaaa", 1]]);
  assert.strictEqual(L.createOutbox("not a list").count, 0);
});

test("pendingOverlay: toggles flip in pairs, the last rename wins, adds keep their order", () => {
  const o = L.pendingOverlay([
    { type: "toggle", id: "i1" }, { type: "rename", id: "i1", text: "A" }, { type: "rename", id: "i1", text: "B" },
    { type: "toggle", id: "i2" }, { type: "toggle", id: "i2" }, { type: "delete", id: "i3" }, { type: "move", id: "i4", to: 0 },
    add("first"), add("second"), { type: "setTitle", title: "T" },
  ]);
  assert.deepStrictEqual(o.rows.get("i1"), { flip: true, text: "B", deleting: false, moving: false });
  assert.strictEqual(o.rows.get("i2").flip, false);
  assert.strictEqual(o.rows.get("i3").deleting, true);
  assert.strictEqual(o.rows.get("i4").moving, true);
  assert.deepStrictEqual(o.adds.map((a) => a.text), ["first", "second"]);
  assert.strictEqual(o.title, "T");
});

test("backoffDelay: about 0.5 s, doubling, at most 10 s ±20 %", () => {
  assert.strictEqual(L.backoffDelay(0, 0.5), 500);
  assert.strictEqual(L.backoffDelay(1, 0.5), 1000);
  assert.strictEqual(L.backoffDelay(4, 0.5), 8000);
  assert.strictEqual(L.backoffDelay(5, 0.5), 10000);
  assert.strictEqual(L.backoffDelay(60, 0.5), 10000);
  assert.strictEqual(L.backoffDelay(0, 0), 400);
  assert.strictEqual(L.backoffDelay(0, 0.9999), 600);
  assert.strictEqual(L.backoffDelay(9, 0.9999), 12000);
});

test("cidFromBytes: 16 bytes make 22 characters of [A-Za-z0-9_-]", () => {
  const next = random(3);
  const seen = new Set();
  for (let round = 0; round < 200; round++) {
    const cid = L.cidFromBytes(Uint8Array.from({ length: 16 }, () => Math.floor(next() * 256)));
    assert.match(cid, /^[A-Za-z0-9_-]{22}$/);
    assert(L.isCid(cid));
    seen.add(cid);
  }
  assert.strictEqual(seen.size, 200);
  assert.strictEqual(L.cidFromBytes(new Uint8Array(16)), "AAAAAAAAAAAAAAAAAAAAAA");
  assert.strictEqual(L.cidFromBytes(new Uint8Array(16).fill(255)), "_____________________w");
  assert(!L.isCid("short") && !L.isCid("has space in it 12345") && !L.isCid("x".repeat(33)));
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
  assert.strictEqual(L.socketURL("http:", "127.0.0.1:8080", "alpha", null), "ws://127.0.0.1:8080/ws?team=alpha");
  assert.strictEqual(L.socketURL("https:", "h", "a b", { id: "B/1", version: 7 }), "wss://h/ws?team=a%20b&board=B%2F1&version=7");
  assert.strictEqual(L.shareLink("http://h", "/", "alpha", "t+1"), "http://h/?team=alpha#token=t%2B1");
  assert.strictEqual(L.tokenKey("alpha"), "stillwater.token.alpha");
});

console.log("page-logic: " + passed + " passed, " + failed + " failed");
process.exit(failed ? 1 : 0);
