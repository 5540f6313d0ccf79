/**
 * @file stillwater-live.js — the JavaScript client of the StillwaterLive protocol (version 1).
 *
 * One file, no framework, no build step. In a page, `<script src="stillwater-live.js"></script>` defines
 * the global `StillwaterLive`; in node, `require("./stillwater-live.js")` returns the same object.
 *
 * ```js
 * const live = StillwaterLive.connect("wss://example.com/live", {
 *   token: "s3cret",                       // sent in the hello frame
 *   params: { team: "alpha" },             // strings handed to the server's check
 *   reauth: () => fetchNewToken(),         // optional: a Promise of a new token, asked for before `expires`
 *   onView(view, info) { render(view, info.changes) },
 *   onStatus(status, detail) { showStatus(status) },
 *   onPresence(presence) { showWhoIsHere(Object.values(presence)) },   // when the server's app shows presence
 *   onError(error) { console.warn(error.code, error.message) },
 * });
 * live.send({ add: { text: "Buy milk" } })
 *   .then((answer) => console.log("command", answer.seq, "recorded at", answer.version, answer.duplicate))
 *   .catch((error) => console.log("refused:", error.code, error.message));
 * ```
 *
 * ## What `connect(url, options)` returns
 *
 * - `send(command)` → `Promise<{version, duplicate, cid, seq}>`: queues the command with a new id of
 *   its own (`cid`, this page's name for it) and the client's next number (`seq`, see "Exactly once";
 *   null in the answer to a command stored unnumbered by an earlier version of this file),
 *   sends it at once when connected and welcomed (else on the next connection), and settles when the
 *   server answers it: resolves on an ack (the view shows the command from `version` on; `duplicate` is
 *   true when the server had decided this number before), rejects with a {@link LiveError} when the
 *   server refused it (`rejected`, `bad_command`, …), when it cannot be known whether it was applied
 *   (`client_expired`, `client_changed`), or when the client was closed before an answer came (`closed`;
 *   the command stays queued). A `rejected` command is decided: its number is used up.
 * - `view`, `version`, `stream`: the copy of the server's view and where it is; `view` is null until the
 *   first snapshot. Each applied frame replaces `view` with a new object (members that did not change
 *   keep their old value, so renderers can compare by reference).
 * - `status`: `"connecting"`, `"live"` (welcomed and holding a view), `"waiting"` (disconnected, a
 *   reconnect is scheduled, or a new token is being asked for after 4419 or a refused hello), `"refused"` (credentials
 *   refused: close 4401), `"failed"` (a protocol error: close 4400), `"expired"` (the credentials expired
 *   and there is no new token: close 4419), `"disconnected"` (the server ended the session: close 4403)
 *   or `"closed"` (after `close()`). In the last five the client does not connect on its own and `send`
 *   rejects (`closed`); `"refused"`, `"failed"` and `"closed"` are final, and `reconnect()` starts again
 *   from `"expired"` and `"disconnected"`.
 * - `pending`: how many commands are queued and not answered yet.
 * - `queued`: those commands, oldest first, each `{cid, seq, command}` (`seq` null for a command stored
 *   by an earlier version of this file; a new array on every read; the queue loaded from `storage` at
 *   the start is there at once). A page draws its "waiting" overlay from it, and from `onQueue` for
 *   every change after.
 * - `clientId`: the id the server numbers this client's commands under (`"c018bcfe56800-0123456789abcdef"`),
 *   from the last welcome or from `storage`; null until a welcome names one.
 * - `you`: what the last welcome told the client about itself (the server's app chooses: a name, a
 *   role), as it came; null until a welcome has one.
 * - `expires`: when the credentials expire, in ms since 1970 (the last welcome's `expires`, or the last
 *   `reauthed`'s); null when they do not expire while connected.
 * - `presence`: who is connected to the same stream now, as the server's presence frames say: an object
 *   from client id (one per connection: one person with two tabs has two) to the entry the server's app
 *   gives it (any JSON), this client's own included. A new object on each change, never changed in
 *   place; empty until a presence `state` comes (a server whose app shows no presence sends none), and
 *   emptied when the connection drops (the `state` after the next welcome fills it again).
 * - `reauth(token)` → `Promise<{expires}>`: sends `token` in a `reauth` frame (it is the token of every
 *   later hello from then on) and resolves when the server answers `reauthed` (`expires` is updated
 *   first); rejects with the server's error (`unauthorized`: the close 4401 follows and the client stops
 *   `"refused"`), with `closed` when the connection ends before the answer, or with `not_live` at once
 *   when the client is not welcomed.
 * - `reconnect(token)`: while `"waiting"` with a reconnect scheduled, connects at once instead of after
 *   the rest of the backoff delay (for a "Try now" button, the browser's `online` event, a tab coming
 *   back); in `"expired"` and `"disconnected"`, connects again (when the user asks) and resumes, the
 *   stored queue being sent after the welcome. Returns true then; in any other status it does nothing
 *   and returns false. `token`, when given, is the token of this hello and the later ones. The backoff
 *   keeps counting if a "waiting" attempt fails too.
 * - `close()`: closes the connection and stops reconnecting.
 *
 * ## Options
 *
 * `token`, `params` (an object of strings), `reauth` (a function returning a Promise of a new token,
 * see "Credentials that expire"), the hooks `onView(view, info)` (once per applied snapshot
 * or patch; `info` is `{version, stream, snapshot, changes}`, `changes` being the patch's `set` and
 * `lists` or null for a snapshot), `onStatus(status, detail)`, `onError(error)` (a frame the client
 * could not use, a frame of an unknown type — ignored, `unknown_frame` —, an error frame about no
 * command, a close that stops the client, a `reauth` option that gave no token),
 * `onPresence(presence, {joins, leaves})` (after each change of `presence`: `joins` the entries that are
 * new or changed, `leaves` the ids that left; a frame that changes nothing calls nothing),
 * `onSettled(cid, error, answer)` (every settled command, also those queued before a reload, whose
 * promises are gone; `answer` or `error` as for `send`) and `onQueue(queued)` (after every change of the
 * queue — a `send`, an answer — with the new `queued`; called after the change is stored, before
 * `onSettled`). `storage` (default: `localStorage` when there is one; `null` keeps the id, the numbering
 * and the queue in memory only) and `storageKey` (default `"stillwater-live.queue " + url`); `backoff`
 * (`{initial: 500, max: 10000, jitter: 0.2}`, in ms); `helloTimeout` (10000 ms); `heartbeat` (`{idle:
 * 25000, timeout: 10000}` in ms, or `false` for none: see "Heartbeats" under Guarantees); and, for
 * tests, `WebSocket`, `random`, `setTimeout`, `clearTimeout`, `now`, `newCid`.
 *
 * ## Guarantees
 *
 * - **The view is the server's.** A snapshot replaces the copy; a patch is applied only when its `from`
 *   is the copy's version, and a list patch only when it fits the list (the checks of the protocol).
 *   A patch that does not fit is never half applied: the client drops the connection and reconnects,
 *   resuming from its version (or asking for a snapshot when its list did not fit).
 * - **Commands are applied once and not lost** (see "Exactly once"). The queue of unanswered commands,
 *   with their numbers and the client id, is written to `storage` before `send` returns, so it survives
 *   a reload, and is sent again after every welcome; the server answers a number it decided before as a
 *   duplicate without applying it again, however late. At most `window` frames (as the welcome says)
 *   are unanswered at once.
 * - **Reconnects back off.** After a drop the client waits `initial · 2^attempt` ms (at most `max`),
 *   times a random factor in `[1 − jitter, 1 + jitter)`, and resumes from its stream and version; the
 *   attempt count returns to 0 once a view arrives. A connection that brings no welcome and view within
 *   `helloTimeout` is dropped and tried again.
 * - **Heartbeats.** A connection that dies without a close is noticed: when the client has received no
 *   frame for `heartbeat.idle` ms (25 s) it sends a `ping` (no `ref`), and when nothing at all arrives
 *   within `heartbeat.timeout` ms (10 s) after it, it drops the connection (`onError` gets `dropped`)
 *   and reconnects after the backoff delay, resuming. Any frame counts as an answer; `pong` does nothing
 *   more. The timers run through the `setTimeout` and `clearTimeout` options.
 * - **Close codes** are handled as the protocol says: 1001 (server shutting down), 4408, 4429 and any
 *   other close reconnect and resume; 4401 stops (`"refused"`; with a `reauth` option, a refused hello is
 *   first tried once more with a new token), 4400 stops (`"failed"`), 4403 stops
 *   (`"disconnected"`, the server's reason in the error's message) and 4419 renews the token through the
 *   `reauth` option and resumes, or without it stops (`"expired"`); each stop is reported through
 *   `onError` once, with the error frame that came before the close (its code; the close code as
 *   `closeCode`). The queue stays in `storage` when the client stops.
 * - Hooks are called outside the client's own bookkeeping, once per event, and an exception thrown by a
 *   hook is reported to `onError`, never breaks the client.
 *
 * ## Credentials that expire
 *
 * - A welcome (or a `reauthed`) with `expires` and a `reauth` option: the client calls `reauth()` at
 *   `expires` − 30 s, or at half the time left when that is shorter (a token that lasts 40 s is renewed
 *   after 20 s), 5 s after the welcome or the last `reauthed` at the soonest (so that a clock running
 *   ahead of the server's does not make it ask again and again), and sends the token it gives in a
 *   `reauth` frame; each `reauthed` sets the next time.
 *   A `reauth()` that fails (or gives no string) is reported to `onError` (`reauth`), and the
 *   credentials expire.
 * - Without a `reauth` option the client sends nothing: at `expires` the server closes with 4419 and the
 *   client stops (`"expired"`, `onError` gets `token_expired`); `reconnect(token)` starts it again.
 * - A close 4419 with a `reauth` option: the status is `"waiting"` (detail `{renewing: true}`) while
 *   `reauth()` runs, then the client reconnects with the new token after the backoff delay, resuming;
 *   when `reauth()` fails, it stops (`"expired"`).
 * - A hello refused (close 4401) with a `reauth` option, when its token is not one the option has just
 *   given (the credentials expired while the client was away, say): the client asks the option for a
 *   new token and reconnects with it, as after 4419; a refusal of that one stops it (`"refused"`), as
 *   does a refusal without the option.
 * - A refused `reauth` frame is answered `unauthorized` and closed with 4401: the client stops
 *   (`"refused"`).
 *
 * ## Exactly once
 *
 * - **The id.** Every welcome names the client's id (`client`). The client keeps it in `storage` and
 *   sends it in every hello (`client`), so the server numbers its commands under the same id across
 *   reconnects, reloads and server restarts. A client with no id yet (the first visit, or after
 *   `client_expired`) sends a hello without one and takes the id its welcome gives.
 * - **The numbers.** `send` numbers each command when it queues it: 1 for the first command under an
 *   id, then 2, 3, … (`seq`); the number stays with the command across reconnects and reloads. Commands
 *   queued before any id is known are numbered from 1 too, and keep those numbers under the id the
 *   welcome then gives. Numbered commands are sent only after a welcome that names an id, in number
 *   order: one goes only when every numbered command before it is in flight. The frames carry `ref`
 *   and `seq` (no `cid`: the server judges a numbered command by its number alone; `cid` stays this
 *   page's own name for a command, in `queued`, `onSettled` and the answers).
 * - **What is stored** under `storageKey`: `{"client": id or null, "next": the next number, "queue":
 *   [{cid, seq, command, sent}]}`, `sent` marking a command sent under the id at least once (stored
 *   before the frame goes). The id and the next number stay stored when the queue is empty.
 * - **One page per `storageKey` numbers under its id.** Two pages numbering under one id would give
 *   different commands one number, and the second would be answered as a duplicate without being
 *   applied. So the page that loaded the stored queue last owns it: it writes a token of its own under
 *   `storageKey + " owner"` when it starts, and a page that finds another's token there when it next
 *   stores (before it sends any new number) stores nothing more and goes on in memory only, as a new
 *   client: its commands that were stored (the owner found them, sends them under the id and settles
 *   them) are rejected with a `superseded` {@link LiveError}, `onError` gets a `superseded` error, the
 *   others are numbered from 1 and it connects again without an id. Pages that are often open in
 *   several tabs may rather give each tab a key of its own.
 * - **The old stored format**, an array of `{cid, command}` stored by an earlier version of this file,
 *   is read and kept **unnumbered**: those commands are sent with their `cid` and no `seq`, as before,
 *   so the server still recognises one it recorded before by its `cid` (numbering them could apply a
 *   command sent before the reload a second time). They are stored in the new format from then on.
 * - **The answers** (`ack` and `error` echo `seq`; they are matched to commands by `ref`):
 *   - `ack`, with `duplicate` when the number was decided before: resolves. A late answer to a frame
 *     that was sent again since settles the command all the same; a second answer is ignored.
 *   - `rejected`, `bad_command` and the other errors without `retry`: reject (`seq` and `cid` are on the
 *     error). A command refused without using its number up (`bad_command`) leaves the server expecting
 *     that number: the `out_of_order` answers that follow number the later commands down to close the
 *     gap (none of them was recorded, so none is applied twice).
 *   - `out_of_order` (`expected`: N): the commands numbered N and up are sent again at once, in order
 *     (after a backoff delay when the same command comes back out of order again); answers to the frames
 *     left behind are ignored.
 *   - `unavailable`, `window_full` (`retry`): the command is sent again after a backoff delay, and no
 *     numbered command after it goes before it (they come back `out_of_order` and wait for it).
 *   - `client_expired`: the server forgot the id, so whether the earlier tries of a command were applied
 *     cannot be known. Every numbered command in the queue, sent or not, is rejected with a
 *     `client_expired` {@link LiveError} (`retry` false; the app decides what to send again), the id and
 *     the numbering are dropped, and the client connects again at once without an id; its welcome gives
 *     a new one, and numbering restarts at 1. Unnumbered commands of the old format stay queued.
 *   - **A welcome naming another id** than the stored one (the hello's id was not kept): numbering
 *     restarts at 1 under the new id. Commands never sent under the old id are numbered again from 1,
 *     in order, and sent. Commands sent under the old id whose answer is unknown are never numbered
 *     again (that could apply them twice): they are rejected with a `client_changed` {@link LiveError}
 *     (`retry` false; the app decides).
 *   - A welcome that names no id (a server that does not number commands): the view works, and old
 *     unnumbered commands are sent, but numbered ones wait for a connection whose welcome names the id;
 *     `onError` gets a `no_client` error.
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module && module.exports) module.exports = api;
  else root.StillwaterLive = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  "use strict";

  const PROTOCOL = 1;
  const OPEN = 1;
  // How long before `expires` the `reauth` option is asked for a new token (or half the time left, when shorter).
  const REAUTH_AHEAD = 30000;
  // ... but never sooner than this after the welcome or the last reauthed: a client whose clock runs
  // ahead of the server's finds every expiry past and would otherwise ask again and again.
  const REAUTH_LEAST = 5000;
  // The longest delay a timer takes (setTimeout fires at once for a longer one).
  const LONGEST_TIMER = 2147483647;
  // Error codes the server sends just before it closes: the close reports them, once.
  const CLOSING = new Set(["unauthorized", "token_expired", "disconnected"]);

  /** An error a command or the connection ended with: a protocol error code, its message, and `retry`. */
  class LiveError extends Error {
    constructor(code, message, details) {
      super(message);
      this.name = "LiveError";
      this.code = code;
      Object.assign(this, details || {});
    }
  }

  /**
   * Applies a list patch (`{changes: {deletes, inserts, moves, updates}, elements}`) to `list` as the
   * protocol's "Applying a list patch" says, and returns the new list. Throws when the patch does not
   * fit the list; `list` is never changed.
   */
  function applyListPatch(list, patch) {
    if (!patch || typeof patch !== "object") throw new Error("a list patch must be an object");
    const changes = patch.changes || {};
    const deletes = changes.deletes || [], inserts = changes.inserts || [];
    const moves = changes.moves || [], updates = changes.updates || [];
    const elements = patch.elements || [];
    if (![deletes, inserts, moves, updates, elements].every(Array.isArray)) throw new Error("a list patch's members must be arrays");
    const oldCount = list.length;
    const role = new Uint8Array(oldCount);   // 0 staying, 1 leaving (deleted or moved away), 2 updated
    const claimOld = (index, value) => {
      if (!Number.isInteger(index) || index < 0 || index >= oldCount) throw new Error("old index " + index + " is out of range");
      if (role[index] !== 0) throw new Error("old index " + index + " has two roles");
      role[index] = value;
    };
    for (const index of deletes) claimOld(index, 1);
    for (const move of moves) {
      if (!Array.isArray(move) || move.length !== 2) throw new Error("a move is [from, to]");
      claimOld(move[0], 1);
    }
    for (const index of updates) claimOld(index, 2);
    const newCount = oldCount - deletes.length + inserts.length;
    if (newCount < 0) throw new Error("more deletes than elements");
    const arriving = new Uint8Array(newCount);
    const claimNew = (index) => {
      if (!Number.isInteger(index) || index < 0 || index >= newCount) throw new Error("new index " + index + " is out of range");
      if (arriving[index]) throw new Error("new index " + index + " has two roles");
      arriving[index] = 1;
    };
    for (const index of inserts) claimNew(index);
    for (const move of moves) claimNew(move[1]);
    if (elements.length !== inserts.length + moves.length + updates.length) throw new Error("the number of elements is not the number the changes name");
    const result = new Array(newCount);
    let old = 0, next = 0;
    for (let index = 0; index < newCount; index++) {
      if (arriving[index]) { result[index] = elements[next++]; continue; }
      while (old < oldCount && role[old] === 1) old++;
      if (old >= oldCount) throw new Error("the patch does not fit the list");
      result[index] = role[old] === 2 ? elements[next++] : list[old];
      old++;
    }
    while (old < oldCount && role[old] === 1) old++;
    if (old !== oldCount) throw new Error("the patch leaves elements of the list unused");
    return result;
  }

  /**
   * The view a patch frame makes of `view`: a new object, or a thrown Error when a list patch does not
   * fit (or names a member that is not a list). `view` is never changed.
   */
  function applyPatch(view, frame) {
    const next = Object.assign({}, view);
    if (frame.set != null) {
      if (typeof frame.set !== "object") throw new Error("\"set\" must be an object");
      for (const name of Object.keys(frame.set)) next[name] = frame.set[name];
    }
    if (frame.lists != null) {
      if (typeof frame.lists !== "object") throw new Error("\"lists\" must be an object");
      for (const name of Object.keys(frame.lists)) {
        if (!Array.isArray(view[name])) throw new Error("\"" + name + "\" is not a list of the view");
        next[name] = applyListPatch(view[name], frame.lists[name]);
      }
    }
    return next;
  }

  /**
   * The delay before reconnect attempt `attempt` (0 for the first), in ms: `initial · 2^attempt`, at most
   * `max`, times `1 − jitter + 2 · jitter · random` for `random` in [0, 1).
   */
  function backoffDelay(attempt, random, backoff) {
    const b = Object.assign({ initial: 500, max: 10000, jitter: 0.2 }, backoff || {});
    const base = Math.min(b.max, b.initial * Math.pow(2, Math.max(0, Math.min(attempt, 30))));
    return Math.round(base * (1 - b.jitter + 2 * b.jitter * random));
  }

  /** A client id: 22 characters of base64url from 16 random bytes (`crypto.getRandomValues` when present). */
  function randomCid(random) {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const bytes = new Uint8Array(16);
    const cryptoObject = typeof crypto !== "undefined" ? crypto : null;
    if (cryptoObject && typeof cryptoObject.getRandomValues === "function") cryptoObject.getRandomValues(bytes);
    else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
    let out = "", bits = 0, value = 0;
    for (const byte of bytes) {
      value = (value << 8) | byte;
      bits += 8;
      while (bits >= 6) { bits -= 6; out += alphabet[(value >> bits) & 63]; }
      value &= (1 << bits) - 1;
    }
    return out + alphabet[(value << (6 - bits)) & 63];
  }

  function isCid(value) { return typeof value === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(value); }

  /** Whether `value` has the form of a client id a welcome gives: `c`, 12 hex digits, `-`, 16 hex digits. */
  function isClientId(value) { return typeof value === "string" && /^c[0-9a-f]{12}-[0-9a-f]{16}$/.test(value); }

  function isSeq(value) { return Number.isSafeInteger(value) && value >= 1; }

  function defaultStorage() {
    try { return typeof localStorage !== "undefined" ? localStorage : null; } catch (e) { return null; }
  }

  /**
   * Connects to a StillwaterLive server at `url` (a `ws:` or `wss:` address) and keeps a copy of its
   * view. See the file's comment for the options, the returned object and the guarantees.
   */
  function connect(url, options) {
    const o = Object.assign({}, options || {});
    const WebSocketType = o.WebSocket || (typeof WebSocket !== "undefined" ? WebSocket : null);
    if (!WebSocketType) throw new Error("StillwaterLive.connect: no WebSocket (pass options.WebSocket)");
    const random = o.random || Math.random;
    const later = o.setTimeout || setTimeout;
    const cancel = o.clearTimeout || clearTimeout;
    const newCid = o.newCid || (() => randomCid(random));
    let storage = o.storage === undefined ? defaultStorage() : o.storage;
    const storageKey = o.storageKey || "stillwater-live.queue " + url;
    // The page that loaded the stored queue last owns it (and the id): its token is stored here.
    const ownerKey = storageKey + " owner";
    const owner = randomCid(random);
    let superseded = false;     // another page took the stored queue over: handOver() is due
    const helloTimeout = o.helloTimeout == null ? 10000 : o.helloTimeout;
    const heartbeat = o.heartbeat === false || o.heartbeat === null ? null : Object.assign({ idle: 25000, timeout: 10000 }, o.heartbeat || {});
    const now = o.now || Date.now;

    // The state of the client; every change of it happens in this closure.
    let status = "connecting";
    let socket = null;          // the current WebSocket, or null
    let welcomed = false;       // the current socket got its welcome
    let synced = false;         // ... and its first snapshot or patch
    let windowSize = 1;         // commands allowed unanswered (the welcome's window)
    let attempt = 0;            // reconnect attempts since the last view
    let resumable = false;      // whether `view` may be resumed from (false after a list did not fit)
    let reconnectTimer = null, helloTimer = null, retryTimer = null, heartbeatTimer = null;
    let lastHeard = 0;          // when the current socket opened or last brought a frame
    let pingedAt = null;        // when the heartbeat's ping unanswered yet went, or null
    let nextRef = 1;
    let closingError = null;   // an error frame a close follows (about the hello, say): the close reports it
    let token = o.token;        // the token of the next hello (a reauth replaces it)
    let you = null;             // the last welcome's `you`
    let expires = null;         // when the credentials expire (the last welcome's or reauthed's), or null
    let reauthTimer = null;
    let renewed = false;        // the token is one the `reauth` option gave after a close, not welcomed yet
    let presence = {};          // client id → the app's entry, from this connection's presence frames
    const reauths = new Map();  // ref → {resolve, reject} for the reauth frames of this socket not answered yet
    const client = { view: null, version: null, stream: null };
    // The id the server numbers this client's commands under (from a welcome), or null, and the number
    // the next queued command gets; both are stored with the queue.
    let clientId = null;
    let nextSeq = 1;
    let welcomedAs = null;      // the id the current socket's welcome named, or null
    // Unanswered commands, oldest first: {cid, seq (null for a stored command of the old format), command,
    // sent (sent under clientId at least once), stored (in storage as this page last wrote it), ref (of its
    // frame in flight on this socket) or null, retryAt, retries}. Numbered commands are in number order.
    const queue = [];
    const waiting = new Map();  // cid → {resolve, reject} for the commands sent by this page's `send`
    // The command frames of this socket not answered yet: ref → {entry, seq}. An entry's `ref` is its
    // latest frame; an earlier one left behind by a resend stays here until its answer comes, since it
    // holds a place of the server's window until then.
    const frames = new Map();

    function call(hook, ...args) {
      if (typeof hook !== "function") return;
      try { hook(...args); } catch (error) {
        if (hook !== o.onError) call(o.onError, new LiveError("hook", "a hook threw: " + (error && error.message), { cause: error }));
      }
    }

    function report(code, message, details) { call(o.onError, new LiveError(code, message, details)); }

    function setStatus(next, detail) {
      if (status === next) return;
      status = next;
      call(o.onStatus, next, detail);
    }

    // ---- the queue, kept in storage ----

    // Reads what an earlier page stored: `{client, next, queue: [{cid, seq, command, sent}]}`, or the
    // old format, an array of `{cid, command}` (kept unnumbered: sent with its cid, as it was).
    function load() {
      if (!storage) return;
      try { storage.setItem(ownerKey, owner); } catch (e) { /* reported by the first persist that fails */ }
      let saved = null;
      try { saved = JSON.parse(storage.getItem(storageKey) || "null"); } catch (e) { saved = null; }
      let entries = [];
      if (Array.isArray(saved)) entries = saved;
      else if (saved && typeof saved === "object") {
        if (isClientId(saved.client)) clientId = saved.client;
        if (isSeq(saved.next)) nextSeq = saved.next;
        if (Array.isArray(saved.queue)) entries = saved.queue;
      }
      let lastSeq = 0;
      for (const entry of entries) {
        if (!entry || !isCid(entry.cid) || !("command" in entry)) continue;
        const seq = isSeq(entry.seq) ? entry.seq : null;
        if (seq !== null) {
          if (seq <= lastSeq) continue;   // not in number order: not ours
          lastSeq = seq;
        }
        queue.push({ cid: entry.cid, seq, command: entry.command, sent: seq !== null && entry.sent === true, stored: true, ref: null, retryAt: 0, retries: 0 });
      }
      if (nextSeq <= lastSeq) nextSeq = lastSeq + 1;
    }

    // Stores the id, the numbering and the queue, unless another page took them over since this one
    // loaded them: then nothing is written, storage is left to that page, and handOver() is due.
    function persist() {
      if (!storage) return;
      try {
        const holder = storage.getItem(ownerKey);
        if (holder !== null && holder !== owner) {
          storage = null;
          superseded = true;
          return;
        }
        if (queue.length === 0 && clientId === null && nextSeq === 1) storage.removeItem(storageKey);
        else {
          storage.setItem(storageKey, JSON.stringify({
            client: clientId, next: nextSeq,
            queue: queue.map((e) => (e.seq === null ? { cid: e.cid, command: e.command } : { cid: e.cid, seq: e.seq, command: e.command, sent: e.sent })),
          }));
        }
        for (const entry of queue) entry.stored = true;
      } catch (error) {
        report("storage", "the queue could not be stored (it is kept in memory): " + (error && error.message));
      }
    }

    // The queue as users see it: a copy, oldest first.
    function queued() { return queue.map((e) => ({ cid: e.cid, seq: e.seq, command: e.command })); }

    function settle(entry, error, answer) { settleAll([entry], () => [error, answer]); }

    // Takes `entries` out of the queue (stored once), then settles each with `outcome(entry)`, an
    // `[error, answer]` pair. The queue is changed before any hook runs, so a hook sees it settled.
    function settleAll(entries, outcome) {
      if (entries.length === 0) return;
      const gone = new Set(entries);
      const kept = queue.filter((e) => !gone.has(e));
      queue.length = 0;
      queue.push(...kept);
      persist();
      if (o.onQueue) call(o.onQueue, queued());
      for (const entry of entries) {
        const [error, answer] = outcome(entry);
        const promise = waiting.get(entry.cid);
        waiting.delete(entry.cid);
        if (promise) { if (error) promise.reject(error); else promise.resolve(answer); }
        call(o.onSettled, entry.cid, error, answer);
      }
    }

    // Sends what is due, keeping at most `windowSize` frames unanswered. Numbered commands go in number
    // order: one is sent only when every numbered command before it is in flight, and only once the id
    // they are numbered under is known. A command's first send under an id is stored before it goes.
    function flush() {
      if (retryTimer !== null) { cancel(retryTimer); retryTimer = null; }
      if (superseded) { handOver(); return; }
      if (!socket || !welcomed) return;
      const time = now();
      let nextRetry = Infinity;
      let inOrder = clientId !== null && welcomedAs === clientId;   // whether the next numbered command may go
      const out = [];
      let firstSend = false;
      for (const entry of queue) {
        if (frames.size + out.length >= windowSize) break;
        const numbered = entry.seq !== null;
        if (entry.ref !== null) continue;
        if (numbered && !inOrder) continue;
        if (entry.retryAt > time) {
          nextRetry = Math.min(nextRetry, entry.retryAt);
          if (numbered) inOrder = false;
          continue;
        }
        if (numbered && !entry.sent) { entry.sent = true; firstSend = true; }
        out.push(entry);
      }
      if (firstSend) {
        persist();
        if (superseded) { handOver(); return; }
      }
      for (const entry of out) {
        entry.ref = nextRef++;
        frames.set(entry.ref, { entry, seq: entry.seq });
        const frame = entry.seq === null
          ? { type: "command", ref: entry.ref, cid: entry.cid, command: entry.command }
          : { type: "command", ref: entry.ref, seq: entry.seq, command: entry.command };
        socket.send(JSON.stringify(frame));
      }
      if (nextRetry !== Infinity) retryTimer = later(flush, Math.max(0, nextRetry - time));
    }

    // The numbered commands from `seq` on are to be sent again, in order: their frames in flight are
    // left to their answers (which are then ignored unless final).
    function rewind(seq) {
      for (const entry of queue) if (entry.seq !== null && entry.seq >= seq) entry.ref = null;
    }

    // A welcome named `id`. The same id: nothing changes. A new one: numbers restart at 1 under it. The
    // commands never sent under the old id are numbered again, in order, from 1; those sent under it
    // whose answer did not come cannot be told applied or not, so they settle with `client_changed`.
    function adopt(id) {
      if (id === clientId) return;
      const old = clientId;
      const unknown = [];
      let seq = 1;
      for (const entry of queue) {
        if (entry.seq === null) continue;
        if (entry.sent) unknown.push(entry);
        else entry.seq = seq++;
      }
      clientId = id;
      nextSeq = seq;
      if (unknown.length === 0) { persist(); return; }
      settleAll(unknown, (entry) => [new LiveError("client_changed",
        "the server gave this client a new id (" + id + ", was " + old + ") before command " + entry.seq +
        " was answered: it may or may not have been applied", { retry: false, seq: entry.seq, cid: entry.cid }), undefined]);
    }

    // The server forgot this client's id: every numbered command settles with `error` (sent or not, the
    // app decides what to send again), the id and the numbering are dropped, and the client connects
    // again without an id, so the next welcome gives it a new one.
    function expire(frame) {
      const numbered = queue.filter((e) => e.seq !== null);
      clientId = null;
      nextSeq = 1;
      detach();
      const message = String(frame.message || frame.code);
      if (numbered.length === 0) persist();
      settleAll(numbered, (entry) => [new LiveError("client_expired", message, { retry: false, seq: entry.seq, cid: entry.cid }), undefined]);
      if (!isFinal() && socket === null && reconnectTimer === null) open();
    }

    // Another page loaded the stored queue and id after this one (it owns them now, and sends the
    // commands it found there under the id): this page goes on in memory only, as a new client. The
    // commands it had stored are the other page's now: they are rejected here with `superseded` (the
    // other page sends them and settles them), and so are any sent under the id that could not be
    // stored. The others were never sent: they are numbered from 1 for the id the next welcome gives.
    function handOver() {
      superseded = false;
      const theirs = queue.filter((e) => e.stored || e.sent);
      let seq = 1;
      for (const entry of queue) {
        if (entry.stored || entry.sent || entry.seq === null) continue;
        entry.seq = seq++;
        entry.sent = false;
      }
      clientId = null;
      nextSeq = seq;
      const reconnect = socket !== null;
      detach();
      report("superseded", "another page took over the stored queue and client id (" + storageKey + "): this page goes on in memory, as a new client");
      settleAll(theirs, (entry) => [new LiveError("superseded",
        "another page took over the stored queue and client id with this command: it is sent and answered there",
        { retry: false, seq: entry.seq, cid: entry.cid }), undefined]);
      if (reconnect && !isFinal() && socket === null && reconnectTimer === null) open();
    }

    // ---- the connection ----

    function open() {
      reconnectTimer = null;
      if (isFinal()) return;
      setStatus("connecting");
      let ws;
      try { ws = new WebSocketType(url); } catch (error) {
        report("connect", "could not open " + url + ": " + (error && error.message));
        lost();
        return;
      }
      socket = ws;
      welcomed = synced = false;
      closingError = null;
      ws.onopen = () => {
        if (ws !== socket) return;
        const hello = { type: "hello", protocol: PROTOCOL };
        if (token != null) hello.token = String(token);
        if (o.params != null) hello.params = o.params;
        if (clientId !== null) hello.client = clientId;
        if (resumable && client.stream != null && Number.isInteger(client.version)) hello.resume = { stream: client.stream, version: client.version };
        ws.send(JSON.stringify(hello));
        lastHeard = now();
        if (heartbeat) heartbeatTimer = later(beat, heartbeat.idle);
      };
      ws.onmessage = (event) => { if (ws === socket) { lastHeard = now(); receive(event.data); } };
      ws.onclose = (event) => { if (ws === socket) closed(event.code, event.reason); };
      ws.onerror = () => { /* a close follows */ };
      helloTimer = later(() => { helloTimer = null; if (ws === socket && !synced) drop("no welcome and view within " + helloTimeout + " ms"); }, helloTimeout);
    }

    function detach() {
      const ws = socket;
      socket = null;
      welcomed = synced = false;
      welcomedAs = null;
      if (helloTimer !== null) { cancel(helloTimer); helloTimer = null; }
      if (retryTimer !== null) { cancel(retryTimer); retryTimer = null; }
      if (reauthTimer !== null) { cancel(reauthTimer); reauthTimer = null; }
      if (heartbeatTimer !== null) { cancel(heartbeatTimer); heartbeatTimer = null; }
      pingedAt = null;
      for (const entry of queue) entry.ref = null;
      frames.clear();
      const unanswered = Array.from(reauths.values());
      reauths.clear();
      for (const waiter of unanswered) waiter.reject(new LiveError("closed", "the connection closed before the reauth was answered"));
      if (ws) {
        ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
        try { if (ws.readyState <= OPEN) ws.close(1000); } catch (e) { /* already closing */ }
      }
      showPresence({});   // last, as it calls a hook; the next connection's state restores it
    }

    // The heartbeat, while a socket is open: after `idle` ms without a frame it sends a ping; when nothing
    // at all arrives within `timeout` ms after that, the socket is dropped (the client reconnects, resuming).
    function beat() {
      heartbeatTimer = null;
      if (socket === null) return;
      const time = now();
      if (pingedAt !== null && lastHeard < pingedAt) {
        if (time - pingedAt >= heartbeat.timeout) { drop("nothing arrived within " + heartbeat.timeout + " ms of a ping"); return; }
        heartbeatTimer = later(beat, pingedAt + heartbeat.timeout - time);
        return;
      }
      pingedAt = null;
      const quiet = time - lastHeard;
      if (quiet < heartbeat.idle) { heartbeatTimer = later(beat, heartbeat.idle - quiet); return; }
      pingedAt = time;
      socket.send(JSON.stringify({ type: "ping" }));
      heartbeatTimer = later(beat, heartbeat.timeout);
    }

    // Leaves the current socket (out of step, unreadable, silent) and reconnects.
    function drop(reason) {
      report("dropped", reason);
      detach();
      lost();
    }

    function lost() {
      detach();
      if (isFinal()) return;
      const delay = backoffDelay(attempt++, random(), o.backoff);
      setStatus("waiting", { delay });
      reconnectTimer = later(open, delay);
    }

    function stop(finalStatus, error) {
      detach();
      if (reconnectTimer !== null) { cancel(reconnectTimer); reconnectTimer = null; }
      setStatus(finalStatus, error);
      const stopped = new LiveError("closed", "the client stopped (" + finalStatus + ") before the command was answered; it stays queued", {});
      for (const promise of waiting.values()) promise.reject(stopped);
      waiting.clear();
      if (error) call(o.onError, error);
    }

    // The statuses in which the client does not connect on its own (from "expired" and "disconnected",
    // `reconnect()` does).
    function isFinal() {
      return status === "refused" || status === "failed" || status === "closed" || status === "expired" || status === "disconnected";
    }

    function closed(code, reason) {
      const text = reason ? ": " + reason : "";
      const said = closingError;
      closingError = null;
      const because = (fallback) => (said ? said.message : fallback) + text;
      const renewable = typeof o.reauth === "function";
      if (code === 4401) {
        const error = new LiveError("unauthorized", because("the server refused the credentials"), { closeCode: code });
        // A hello refused with a token the `reauth` option did not just give (one that expired while the
        // client was away, say) is tried once more with a new one; a refused reauth frame stops.
        if (renewable && !welcomed && !renewed) renew("refused", error);
        else stop("refused", error);
      } else if (code === 4400) stop("failed", new LiveError(said ? said.code : "protocol", because("the server closed with a protocol error"), { closeCode: code }));
      else if (code === 4403) stop("disconnected", new LiveError("disconnected", because("the server ended the session"), { closeCode: code }));
      else if (code === 4419) {
        const error = new LiveError("token_expired", because("the credentials expired"), { closeCode: code });
        if (renewable) renew("expired", error);
        else stop("expired", error);
      } else {
        if (said) call(o.onError, said);
        lost();
      }
    }

    function receive(data) {
      let frame = null;
      if (typeof data === "string") { try { frame = JSON.parse(data); } catch (e) { frame = null; } }
      if (!frame || typeof frame !== "object" || typeof frame.type !== "string") { drop("a frame that is not a JSON object with a type"); return; }
      switch (frame.type) {
        case "welcome": return receiveWelcome(frame);
        case "snapshot": return receiveSnapshot(frame);
        case "patch": return receivePatch(frame);
        case "ack": return receiveAck(frame);
        case "error": return receiveError(frame);
        case "reauthed": return receiveReauthed(frame);
        case "presence": return receivePresence(frame);
        case "pong": return;   // it counts as a frame heard, which is all the heartbeat wants
        default: report("unknown_frame", "a frame of unknown type \"" + String(frame.type).slice(0, 32) + "\" was ignored");
      }
    }

    function receiveWelcome(frame) {
      if (welcomed || frame.protocol !== PROTOCOL) { drop("an unexpected welcome (protocol " + frame.protocol + ")"); return; }
      welcomed = true;
      windowSize = Number.isInteger(frame.window) && frame.window > 0 ? frame.window : 1;
      renewed = false;
      you = frame.you === undefined ? null : frame.you;
      expires = Number.isInteger(frame.expires) ? frame.expires : null;
      scheduleReauth();
      if (typeof frame.stream === "string" && frame.stream !== client.stream) resumable = false;
      if (isClientId(frame.client)) {
        welcomedAs = frame.client;
        adopt(frame.client);
      } else if (queue.some((e) => e.seq !== null)) report("no_client", "the welcome names no client id: numbered commands wait for a welcome that does");
      if (socket === null) return;   // a hook closed the client
      flush();
    }

    function viewArrived(next, version, changes) {
      client.view = next;
      client.version = version;
      resumable = true;
      if (!synced) {
        synced = true;
        attempt = 0;
        if (helloTimer !== null) { cancel(helloTimer); helloTimer = null; }
        setStatus("live");
      }
      call(o.onView, next, { version, stream: client.stream, snapshot: changes === null, changes });
    }

    function receiveSnapshot(frame) {
      if (!welcomed || !Number.isInteger(frame.version) || typeof frame.stream !== "string" || !frame.view || typeof frame.view !== "object") {
        drop("a snapshot out of place or without stream, version and view");
        return;
      }
      client.stream = frame.stream;
      viewArrived(Object.assign({}, frame.view), frame.version, null);
    }

    function receivePatch(frame) {
      if (!welcomed || client.view === null || frame.from !== client.version || !Number.isInteger(frame.version)) {
        drop("a patch from version " + frame.from + " for a copy at " + client.version + ": resuming");
        return;
      }
      let next;
      try { next = applyPatch(client.view, frame); } catch (error) {
        resumable = false;   // the copy is not the server's: ask for a snapshot
        drop("a patch that does not fit the copy (" + error.message + "): asking for a snapshot");
        return;
      }
      const changes = {};
      if (frame.set != null) changes.set = frame.set;
      if (frame.lists != null) changes.lists = frame.lists;
      viewArrived(next, frame.version, changes);
    }

    // The command an answer is about: {entry, seq (the number its frame carried), latest (the answer is
    // to the entry's latest frame)}, or null when it is no queued command's (answered before). The frame's
    // `ref` names it; an answer without one is matched to a command in flight by `seq` or `cid`.
    function answered(frame) {
      let found = null;
      if (Number.isInteger(frame.ref) && frames.has(frame.ref)) {
        found = frames.get(frame.ref);
        frames.delete(frame.ref);
        found = { entry: found.entry, seq: found.seq, latest: found.entry.ref === frame.ref };
      } else if (frame.ref == null) {
        const entry = queue.find((e) => e.ref !== null && (isSeq(frame.seq) ? e.seq === frame.seq : e.seq === null && e.cid === frame.cid));
        if (entry) { frames.delete(entry.ref); found = { entry, seq: entry.seq, latest: true }; }
      }
      if (!found || queue.indexOf(found.entry) < 0) return null;
      return found;
    }

    function receiveAck(frame) {
      const found = answered(frame);
      if (found) {
        const entry = found.entry;
        settle(entry, null, { version: frame.version, duplicate: frame.duplicate === true, cid: entry.cid, seq: entry.seq });
      }
      flush();
    }

    function receiveError(frame) {
      const found = answered(frame);
      const details = { retry: frame.retry === true };
      if (frame.ref != null) details.ref = frame.ref;
      if (frame.cid != null) details.cid = frame.cid;
      if (frame.seq != null) details.seq = frame.seq;
      if (frame.expected != null) details.expected = frame.expected;
      const error = new LiveError(String(frame.code), String(frame.message || frame.code), details);
      if (!found) {
        if (frame.code === "client_expired" && welcomed) { expire(frame); return; }
        const reauth = Number.isInteger(frame.ref) ? reauths.get(frame.ref) : undefined;
        if (reauth) { reauths.delete(frame.ref); reauth.reject(error); }
        // Before the welcome it is about the hello, and a close follows; so it does after these codes:
        // the close reports it.
        if (!welcomed || CLOSING.has(frame.code)) { closingError = error; return; }
        if (reauth) return;
        if (frame.ref != null && Number.isInteger(frame.ref) && frame.ref < nextRef) { flush(); return; }   // about a command answered before
        call(o.onError, error);
        return;
      }
      const entry = found.entry;
      if (frame.code === "client_expired" && entry.seq !== null) { expire(frame); return; }
      if (frame.retry === true || frame.code === "out_of_order") {
        // Not taken. An answer to a frame sent again since is old news.
        if (found.latest) {
          if (entry.seq !== null && frame.code === "out_of_order") {
            const expected = isSeq(frame.expected) ? Math.min(frame.expected, entry.seq) : entry.seq;
            resendFrom(expected);
            // At once the first time; a command that keeps coming back out of order waits, so that a server
            // whose numbering moves under the client (two pages on one id) is not asked in a loop.
            if (entry.retries++ > 0) {
              const head = queue.find((e) => e.seq !== null && e.seq >= expected);
              if (head) head.retryAt = Math.max(head.retryAt, now() + backoffDelay(entry.retries - 2, random(), o.backoff));
            }
          } else {
            entry.ref = null;
            entry.retryAt = now() + backoffDelay(entry.retries++, random(), o.backoff);
            if (entry.seq !== null) rewind(entry.seq);
          }
        }
        flush();
        return;
      }
      if (entry.seq !== null) error.seq = entry.seq;
      error.cid = entry.cid;
      settle(entry, error, undefined);
      flush();
    }

    // The server expects number `expected` next: the numbered commands from it on are sent again, in
    // order. When no queued command has that number (the commands that had it were answered with an
    // error that did not use it up, `bad_command` say), nothing from it on is recorded, so the queued
    // commands above it are numbered down to close the gap.
    function resendFrom(expected) {
      const above = queue.filter((e) => e.seq !== null && e.seq >= expected);
      if (above.length > 0 && above[0].seq > expected) {
        const gap = above[0].seq - expected;
        for (const entry of above) entry.seq -= gap;
        nextSeq -= gap;
        persist();
      }
      rewind(expected);
    }

    // ---- presence ----

    // A `state` replaces the list; `joins` add or replace entries and `leaves` remove them (leaves first,
    // so an id in both stays), which makes a frame applied twice change nothing the second time.
    function receivePresence(frame) {
      const isMap = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
      const leaves = frame.leaves == null ? [] : frame.leaves;
      const fits = frame.state != null ? isMap(frame.state)
        : (frame.joins == null || isMap(frame.joins)) && Array.isArray(leaves) && leaves.every((id) => typeof id === "string");
      if (!welcomed || !fits) { drop("a presence frame out of place or without state, or joins and leaves"); return; }
      const next = {};
      const take = (entries) => { for (const id of Object.keys(entries)) if (id !== "__proto__") next[id] = entries[id]; };
      if (frame.state != null) take(frame.state);
      else {
        take(presence);
        for (const id of leaves) delete next[id];
        take(frame.joins || {});
      }
      showPresence(next);
    }

    // Makes `next` the presence list when it differs from the current one, and tells `onPresence` which
    // entries joined (new or changed) and which left.
    function showPresence(next) {
      const has = (object, id) => Object.prototype.hasOwnProperty.call(object, id);
      const joins = {}, leaves = [];
      let changed = false;
      for (const id of Object.keys(next)) {
        if (has(presence, id) && JSON.stringify(presence[id]) === JSON.stringify(next[id])) continue;
        joins[id] = next[id];
        changed = true;
      }
      for (const id of Object.keys(presence)) if (!has(next, id)) { leaves.push(id); changed = true; }
      if (!changed) return;
      presence = next;
      call(o.onPresence, next, { joins, leaves });
    }

    // ---- credentials that expire ----

    // A token from the `reauth` option: a promise of a non-empty string.
    function renewToken() {
      return new Promise((resolve) => resolve(o.reauth())).then((fresh) => {
        if (typeof fresh !== "string" || fresh === "") throw new TypeError("the reauth option gave " + typeof fresh + ", not a token");
        return fresh;
      });
    }

    // Sends `fresh` in a reauth frame (it is the token of later hellos from now on): a promise resolved
    // with {expires} on `reauthed`, rejected with the error that answers it or when the connection closes.
    function sendReauth(fresh) {
      if (socket === null || !welcomed) {
        return Promise.reject(new LiveError("not_live", "a reauth needs a welcomed connection (the client is " + status + ")"));
      }
      const ref = nextRef++;
      token = fresh;
      const answer = new Promise((resolve, reject) => reauths.set(ref, { resolve, reject }));
      socket.send(JSON.stringify({ type: "reauth", token: fresh, ref }));
      return answer;
    }

    // With a `reauth` option and an expiry, asks for a new token at `expires` − min(REAUTH_AHEAD, half the
    // time left), REAUTH_LEAST from now at the soonest, and sends it. Should that fail, the credentials
    // expire and the close 4419 renews them.
    function scheduleReauth() {
      if (reauthTimer !== null) { cancel(reauthTimer); reauthTimer = null; }
      if (typeof o.reauth !== "function" || expires === null) return;
      const left = Math.max(0, expires - now());
      const delay = Math.max(REAUTH_LEAST, left - Math.min(REAUTH_AHEAD, left / 2));
      const ws = socket;
      const due = now() + delay;
      const wait = () => {
        const rest = due - now();
        reauthTimer = rest > LONGEST_TIMER ? later(wait, LONGEST_TIMER) : later(ask, rest);
      };
      const ask = () => {
        reauthTimer = null;
        renewToken().then((fresh) => {
          if (socket !== ws) { token = fresh; return; }
          sendReauth(fresh).catch(() => { /* a refusal is reported by the close 4401 that follows; a drop reconnects */ });
        }, (error) => report("reauth", "the reauth option gave no token (" + (error && error.message) + "): the credentials expire", { cause: error }));
      };
      wait();
    }

    function receiveReauthed(frame) {
      const waiter = Number.isInteger(frame.ref) ? reauths.get(frame.ref) : undefined;
      if (waiter) reauths.delete(frame.ref);
      expires = Number.isInteger(frame.expires) ? frame.expires : null;
      scheduleReauth();
      if (waiter) waiter.resolve({ expires });
    }

    // The credentials expired (close 4419) or a hello was refused (4401), and the `reauth` option renews
    // them: a new token, then a reconnect after the backoff delay, resuming. When the option gives no
    // token the client stops with `finalStatus`, reporting `error`.
    function renew(finalStatus, error) {
      detach();
      if (isFinal()) return;   // a hook closed the client
      setStatus("waiting", { renewing: true });
      const pending = () => status === "waiting" && socket === null && reconnectTimer === null;
      renewToken().then((fresh) => {
        if (!pending()) return;
        token = fresh;
        renewed = true;
        lost();
      }, (failure) => {
        if (!pending()) return;
        error.message += "; the reauth option gave no new token: " + (failure && failure.message);
        error.cause = failure;
        stop(finalStatus, error);
      });
    }

    // ---- the public face ----

    load();

    Object.defineProperty(client, "status", { get: () => status, enumerable: true });
    Object.defineProperty(client, "pending", { get: () => queue.length, enumerable: true });
    Object.defineProperty(client, "queued", { get: queued, enumerable: true });
    Object.defineProperty(client, "clientId", { get: () => clientId, enumerable: true });
    Object.defineProperty(client, "you", { get: () => you, enumerable: true });
    Object.defineProperty(client, "expires", { get: () => expires, enumerable: true });
    Object.defineProperty(client, "presence", { get: () => presence, enumerable: true });

    client.send = function (command) {
      if (command === undefined) return Promise.reject(new TypeError("StillwaterLive send: a command is needed"));
      if (isFinal()) return Promise.reject(new LiveError("closed", "the client is " + status));
      const cid = newCid();
      if (!isCid(cid)) return Promise.reject(new TypeError("StillwaterLive send: newCid returned an invalid cid " + cid));
      const promise = new Promise((resolve, reject) => waiting.set(cid, { resolve, reject }));
      queue.push({ cid, seq: nextSeq++, command, sent: false, stored: false, ref: null, retryAt: 0, retries: 0 });
      persist();
      if (o.onQueue) call(o.onQueue, queued());
      flush();
      return promise;
    };

    client.reauth = function (fresh) {
      if (typeof fresh !== "string" || fresh === "") return Promise.reject(new TypeError("StillwaterLive reauth: a token (a non-empty string) is needed"));
      return sendReauth(fresh);
    };

    client.reconnect = function (fresh) {
      const stopped = status === "expired" || status === "disconnected";
      if (!stopped && (status !== "waiting" || reconnectTimer === null)) return false;
      if (fresh != null) token = String(fresh);
      if (reconnectTimer !== null) cancel(reconnectTimer);
      if (stopped) { status = "waiting"; attempt = 0; }   // open() reports "connecting"
      open();
      return true;
    };

    client.close = function () {
      if (isFinal()) return;
      stop("closed", null);
    };

    open();
    return client;
  }

  return { connect, applyListPatch, applyPatch, backoffDelay, LiveError, protocol: PROTOCOL };
});
