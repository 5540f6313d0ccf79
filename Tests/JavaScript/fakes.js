// The fakes the client's tests share: timers that run only when a test advances the clock, and a
// localStorage that outlives a client to stand for a reload. Not a test file (node --test runs only
// *.test.js here).
"use strict";

/** Timers that run only when the test advances the clock. */
function fakeClock() {
  let time = 1000, nextId = 1;
  const timers = new Map();
  return {
    now: () => time,
    setTimeout(fn, ms) { const id = nextId++; timers.set(id, { at: time + Math.max(0, ms), fn }); return id; },
    clearTimeout(id) { timers.delete(id); },
    /** The delay of the one pending timer that fires first (for backoff checks). */
    nextDelay() { let at = Infinity; for (const t of timers.values()) at = Math.min(at, t.at); return at - time; },
    advance(ms) {
      const end = time + ms;
      for (;;) {
        let first = null;
        for (const [id, t] of timers) if (t.at <= end && (!first || t.at < first[1].at)) first = [id, t];
        if (!first) break;
        timers.delete(first[0]);
        time = first[1].at;
        first[1].fn();
      }
      time = end;
    },
  };
}

function fakeStorage() {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
    items,
  };
}

module.exports = { fakeClock, fakeStorage };
