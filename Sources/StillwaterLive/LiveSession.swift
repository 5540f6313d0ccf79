import Foundation
/// One client's connection as a state machine, without I/O: it is fed decoded frames, answers, patches
/// and time, and it holds the frames waiting to be written.
///
/// Its phases are ``Phase/awaitingHello`` → ``Phase/authenticating`` → ``Phase/live`` → ``Phase/closing``
/// → ``Phase/closed``. Each input method returns the work it needs done (``Effect``: check credentials,
/// submit a command), and frames to write collect in the session's outbox, which ``takeBatch()`` empties.
/// ``LiveConnection`` drives one for an adapter; a test or another driver may drive one directly:
///
/// ```swift
/// import StillwaterLive
///
/// var session = LiveSession<Int, String>(limits: LiveLimits(window: 2))
/// let hello = try LiveClientFrame<Int>.decode(#"{"type":"hello","protocol":1,"token":"t"}"#, maxBytes: 1_000)
/// print(session.receive(hello).count, session.phase)
/// let client = LiveClientID(issuedAt: 0, random: 1)
/// session.authenticated(as: "ann", client: client, stream: "s-1", sync: "(the snapshot)", version: 0)
/// if case .frames(let frames)? = session.takeBatch() { print(session.phase, frames[0]) }
/// // Prints "1 authenticating",
/// //        "live {\"type\":\"welcome\",\"protocol\":1,\"stream\":\"s-1\",\"window\":2,\"client\":\"c000000000000-0000000000000001\"}"
/// ```
///
/// Memory is bounded whatever the client does: a command holds one of the ``LiveLimits/window`` places
/// from the moment it is taken until its answer leaves the outbox (a command beyond them is refused with
/// `window_full`); a new patch is not queued while the last one still waits in the outbox (the next
/// one, once it is taken, covers every version since); and an outbox that still grows past
/// ``LiveLimits/maxQueuedFrames`` (a client that sends and never reads) is dropped and the connection
/// closed with ``LiveCloseCode/tooSlow``.
public struct LiveSession<Command: Sendable, Identity: Sendable>: Sendable {
    /// Where a session is in its life.
    public enum Phase: Sendable, Equatable {
        /// Waiting for the client's hello frame.
        case awaitingHello
        /// The hello came; waiting for the service to accept or refuse the credentials. Commands sent
        /// meanwhile are held (within the window) and submitted once the client is admitted.
        case authenticating
        /// Admitted: the client has had its welcome and first view, and its commands are submitted.
        case live
        /// Closing: the frames still in the outbox are written, then the close.
        case closing
        /// Closed: nothing more is written or taken.
        case closed
    }

    /// Work the session needs its driver to do.
    public enum Effect: Sendable {
        /// Check the client's credentials (``LiveService/authenticate(_:)``), then call
        /// ``LiveSession/authenticated(as:stream:sync:version:)`` or ``LiveSession/refused(_:)``. The
        /// client resumes from `resume`, when it gave one.
        case authenticate(LiveHandshake, resume: LiveResume?)
        /// Submit the command, as this identity; call ``LiveSession/answered(_:with:)`` with its outcome.
        case submit(LiveCommandRequest<Command>, Identity)
        /// Check the new credentials of a `reauth` frame (the handshake is the hello's, with the new
        /// token), then call ``LiveSession/reauthenticated(as:expires:ref:)`` or
        /// ``LiveSession/refused(_:ref:)``.
        case reauthenticate(LiveHandshake, ref: Int?)
    }

    /// What to write next, with the frames as `String`s (``takeWrite()``'s answer).
    ///
    /// Kept for adapters written before ``LiveWrite``: ``takeBatch()`` hands the same frames as
    /// ``LiveFrame``s, whose bytes every client of a hub shares.
    public enum Write: Sendable, Equatable {
        /// Text frames, in order.
        case frames([String])
        /// Close the connection with this code and reason; nothing follows.
        case close(LiveCloseCode, reason: String)
    }

    private enum State: Sendable {
        case awaitingHello
        case authenticating(held: [LiveCommandRequest<Command>], helloRef: Int?, client: LiveClientID?)
        case live(Identity, client: LiveClientID)
        case closing(LiveCloseCode, reason: String)
        case closed
    }

    private typealias Outgoing = LiveOutgoingFrame

    /// The session's limits.
    public let limits: LiveLimits
    /// What the transport saw, passed on to ``LiveService/authenticate(_:)``.
    public let transport: [String: String]
    /// The client's next view frame must be a snapshot (see ``resync()``).
    private var mustSnapshot = false
    /// The hello's parameters, handed again to ``LiveService/authenticate(_:)`` with a `reauth`'s token.
    private var helloParams: [String: String] = [:]
    private var state = State.awaitingHello
    /// The frames waiting, the window places held, whether a view frame waits.
    private var outbox = LiveOutbox()
    /// The version of the last view queued for the client (its snapshot or last patch); nil before.
    public private(set) var version: Int?
    /// The id the hello named, if any.
    private var helloClient: LiveClientID?
    /// The close ``takeBatch()`` handed over, once it did (for the observer's report).
    private(set) var sentClose: LiveCloseCode?

    /// The id the client numbers its commands under, once admitted: its hello's, or the one its welcome
    /// gave it.
    public var client: LiveClientID? {
        if case .live(_, let client) = state { return client }
        return nil
    }

    /// A new session, waiting for its hello.
    ///
    /// - Parameters:
    ///   - limits: The window and queue bounds.
    ///   - transport: What the adapter saw (headers, address), for the service's check.
    public init(limits: LiveLimits = LiveLimits(), transport: [String: String] = [:]) {
        self.limits = limits
        self.transport = transport
    }

    /// Where the session is in its life.
    public var phase: Phase {
        switch state {
        case .awaitingHello: .awaitingHello
        case .authenticating: .authenticating
        case .live: .live
        case .closing: .closing
        case .closed: .closed
        }
    }

    /// Whether ``takeBatch()`` has something: frames in the outbox, or the close.
    public var hasWrite: Bool {
        if !outbox.frames.isEmpty { return true }
        if case .closing = state { return true }
        return false
    }

    /// How many frames wait in the outbox.
    public var queuedFrames: Int { outbox.frames.count }

    /// Who the client is, while it is live: the identity the service admitted it as (or re-admitted it
    /// as, after a `reauth`); nil in every other phase.
    public var identity: Identity? {
        guard case .live(let identity, _) = state else { return nil }
        return identity
    }

    /// Takes a frame the client sent.
    ///
    /// - Returns: The work to do: credentials to check (for a hello), a command to submit.
    public mutating func receive(_ frame: LiveClientFrame<Command>) -> [Effect] {
        switch (state, frame) {
        case (.awaitingHello, .hello(let hello)):
            guard hello.protocolVersion == liveProtocolVersion else {
                fail(.unsupportedProtocol, "this server speaks protocol \(liveProtocolVersion), not \(hello.protocolVersion)",
                     ref: hello.ref, closing: .protocolError)
                return []
            }
            state = .authenticating(held: [], helloRef: hello.ref, client: hello.client)
            helloClient = hello.client
            helloParams = hello.params
            let handshake = LiveHandshake(token: hello.token, params: hello.params, transport: transport)
            return [.authenticate(handshake, resume: hello.resume)]
        case (.awaitingHello, .command(let request)):
            fail(.helloExpected, "the first frame must be a hello", ref: request.ref, closing: .protocolError)
        case (.authenticating, .hello(let hello)), (.live, .hello(let hello)):
            fail(.helloExpected, "a hello is only accepted as the first frame", ref: hello.ref, closing: .protocolError)
        case (.authenticating(var held, let helloRef, let client), .command(let request)):
            if request.seq != nil, client == nil {
                // The client cannot know the id its numbers belong to before the welcome names it.
                enqueue(Outgoing(text: ServerFrame.error(
                    .malformed, "a numbered command (seq) needs a client id: send it after the welcome, which gives one",
                    ref: request.ref, cid: request.cid, seq: request.seq)))
                return []
            }
            guard takePlace(for: request) else { return [] }
            held.append(numbered(request, by: client))
            state = .authenticating(held: held, helloRef: helloRef, client: client)
        case (.live(let identity, let client), .command(let request)):
            guard takePlace(for: request) else { return [] }
            return [.submit(numbered(request, by: client), identity)]
        case (.live, .reauth(let reauth)):
            let handshake = LiveHandshake(token: reauth.token, params: helloParams, transport: transport)
            return [.reauthenticate(handshake, ref: reauth.ref)]
        case (.authenticating, .ping(let ref)), (.live, .ping(let ref)):
            enqueue(Outgoing(text: ServerFrame.pong(ref: ref)))
        case (.awaitingHello, .ping(let ref)):
            fail(.helloExpected, "the first frame must be a hello", ref: ref, closing: .protocolError)
        case (.awaitingHello, .reauth(let reauth)):
            fail(.helloExpected, "the first frame must be a hello", ref: reauth.ref, closing: .protocolError)
        case (.authenticating, .reauth(let reauth)):
            enqueue(Outgoing(text: ServerFrame.error(
                .malformed, "a reauth is taken once the client is admitted (after the welcome)", ref: reauth.ref)))
        case (.closing, _), (.closed, _):
            break
        }
        return []
    }

    /// Takes a frame that did not decode: the client gets an error frame with the error's code, message
    /// and `ref`. Before the hello this is a protocol error and the connection closes (4400).
    public mutating func receive(invalid error: LiveFrameError) {
        switch state {
        case .awaitingHello:
            fail(error.code, error.message + " (the first frame must be a hello)", ref: error.ref, closing: .protocolError)
        case .authenticating, .live:
            enqueue(Outgoing(text: ServerFrame.error(error.code, error.message, ref: error.ref)))
        case .closing, .closed:
            break
        }
    }

    /// Takes a binary frame: the client gets an error frame (code `binary`), as for any invalid frame.
    public mutating func receiveBinary() {
        receive(invalid: LiveFrameError(.binary, "binary frames are not accepted; frames are JSON text"))
    }

    /// Admits the client: queues the welcome and its first view (`sync`: a snapshot, or a patch from the
    /// version it resumed from, at `version`), and submits the commands it sent meanwhile.
    ///
    /// Ignored unless the session is ``Phase/authenticating`` (the connection may have closed meanwhile).
    /// The client keeps the id its hello named, or gets a new one (issued now) in the welcome.
    @discardableResult
    public mutating func authenticated(as identity: Identity, stream: String, sync: String, version: Int) -> [Effect] {
        authenticated(as: identity, client: helloClient ?? LiveClientID.issue(), stream: stream, sync: sync, version: version)
    }

    /// Admits the client under `client`: queues the welcome (which names `client`) and its first view
    /// (`sync`: a snapshot, or a patch from the version it resumed from, at `version`), and submits the
    /// commands it sent meanwhile, numbered by `client`.
    ///
    /// Ignored unless the session is ``Phase/authenticating``. A hello that named an id keeps it:
    /// `client` is then ignored.
    ///
    /// - Parameters:
    ///   - identity: Who the service said the client is.
    ///   - client: The id for a client whose hello named none (issue one with ``LiveClientID/issue(now:)``).
    ///   - stream: The stream identity, for the welcome.
    ///   - sync: The first view frame.
    ///   - version: The version `sync` brings the client to.
    ///   - you: What the welcome tells the client about itself, as JSON text (its `you` member); nil
    ///     leaves the member out.
    ///   - expires: When the client's credentials expire (the welcome's `expires`); nil for never. The
    ///     driver calls ``expired()`` then.
    @discardableResult
    public mutating func authenticated(
        as identity: Identity, client: LiveClientID, stream: String, sync: String, version: Int, you: String? = nil,
        expires: Date? = nil
    ) -> [Effect] {
        authenticated(as: identity, client: client, stream: stream, sync: LiveFrame(sync), version: version, you: you, expires: expires)
    }

    /// Admits the client as ``authenticated(as:client:stream:sync:version:you:expires:)`` does, with its
    /// first view frame as the hub's shared frame.
    @discardableResult
    mutating func authenticated(
        as identity: Identity, client: LiveClientID, stream: String, sync: LiveFrame, version: Int, you: String?, expires: Date?
    ) -> [Effect] {
        guard case .authenticating(let held, _, let named) = state else { return [] }
        let client = named ?? client
        state = .live(identity, client: client)
        enqueue(Outgoing(text: ServerFrame.welcome(stream: stream, window: limits.window, client: client, you: you, expires: expires)))
        enqueue(Outgoing(frame: sync, isSync: true))
        self.version = version
        outbox.syncWaiting = true
        guard case .live = state else { return [] }
        return held.map { .submit($0, identity) }
    }

    /// Refuses the client: an error frame (code `unauthorized`, with the hello's `ref`) with `message`,
    /// then the close (4401).
    public mutating func refused(_ message: String) {
        guard case .authenticating(_, let helloRef, _) = state else { return }
        fail(.unauthorized, message, ref: helloRef, closing: .unauthorized)
    }

    /// Admits a live client again after its `reauth` frame: from now on its commands are decided as
    /// `identity`, and it gets a `reauthed` frame (with the `reauth`'s `ref`, and `expires` when the new
    /// credentials expire). Ignored unless the session is ``Phase/live``.
    public mutating func reauthenticated(as identity: Identity, expires: Date?, ref: Int?) {
        guard case .live(_, let client) = state else { return }
        state = .live(identity, client: client)
        enqueue(Outgoing(text: ServerFrame.reauthed(ref: ref, expires: expires)))
    }

    /// Refuses a live client's `reauth`: an error frame (code `unauthorized`, with the `reauth`'s
    /// `ref`) with `message`, then the close (4401). Ignored unless the session is ``Phase/live``.
    public mutating func refused(_ message: String, ref: Int?) {
        guard case .live = state else { return }
        fail(.unauthorized, message, ref: ref, closing: .unauthorized)
    }

    /// The client's credentials expired: unless it is already closing, it gets an error frame (code
    /// `token_expired`) and the close (4419). Frames waiting for it are written first. While the client
    /// is being admitted (credentials that had expired when it presented them), the error carries the
    /// hello's `ref`.
    public mutating func expired() {
        switch state {
        case .live:
            fail(.tokenExpired, "the credentials expired: connect again with new ones (a reauth before the expiry keeps the connection)",
                 ref: nil, closing: .expired)
        case .authenticating(_, let helloRef, _):
            fail(.tokenExpired, "the credentials expired: connect again with new ones", ref: helloRef, closing: .expired)
        case .awaitingHello, .closing, .closed:
            break
        }
    }

    /// The server ends the session (``LiveHub/disconnect(where:reason:)``): unless it is already closing,
    /// the client gets an error frame (code `disconnected`) with `reason`, then the close (4403). Frames
    /// waiting for it are written first.
    public mutating func disconnect(reason: String) {
        switch state {
        case .authenticating, .live: fail(.disconnected, reason, ref: nil, closing: .disconnected)
        case .awaitingHello, .closing, .closed: break
        }
    }

    /// The client's next view frame must be a snapshot (its audience changed, so no patch fits the copy
    /// it has). Ignored unless the session is ``Phase/live``.
    public mutating func resync() {
        guard case .live = state else { return }
        mustSnapshot = true
    }

    /// Queues a presence frame for a live client: `changes` (joins and leaves), or, when a presence frame
    /// of its still waits in the outbox, `whole` (the whole list) in that frame's place, so that a client
    /// that reads slowly holds one presence frame at most. Ignored unless the session is ``Phase/live``.
    ///
    /// - Parameters:
    ///   - changes: A `presence` frame with `joins` and `leaves`.
    ///   - whole: A `presence` frame with the whole list (`state`) as it is after those changes.
    public mutating func presence(changes: String, whole: String) {
        presence(changes: LiveFrame(changes), whole: LiveFrame(whole))
    }

    /// Queues a presence frame as ``presence(changes:whole:)-(String,String)`` does, with frames the hub made
    /// once for all its clients.
    mutating func presence(changes: LiveFrame, whole: LiveFrame) {
        guard case .live = state else { return }
        if !outbox.replacePresence(with: whole) {
            enqueue(Outgoing(frame: changes, isPresence: true))
        }
    }

    /// The version a client that must be sent a snapshot is taken to have: no audience keeps a view at it.
    static var needsSnapshot: Int { Int.min + 1 }

    /// Takes the outcome of a submitted command: an `ack` (or an error frame) for the client when the
    /// command had a `ref` or a `cid`; the window place is given back when that frame is taken.
    public mutating func answered(_ request: LiveCommandRequest<Command>, with outcome: LiveOutcome) {
        guard case .live = state else {
            outbox.placesHeld = max(0, outbox.placesHeld - 1)
            return
        }
        let text: String?
        let named = request.ref != nil || request.cid != nil || request.seq != nil
        switch outcome {
        case .applied(let version):
            text = named ? ServerFrame.ack(ref: request.ref, cid: request.cid, seq: request.seq, version: version, duplicate: false) : nil
        case .duplicate(let version):
            text = named ? ServerFrame.ack(ref: request.ref, cid: request.cid, seq: request.seq, version: version, duplicate: true) : nil
        case .rejected(let message):
            text = ServerFrame.error(.rejected, message, ref: request.ref, cid: request.cid, seq: request.seq)
        case .unavailable(let message):
            text = ServerFrame.error(.unavailable, message, ref: request.ref, cid: request.cid, seq: request.seq)
        case .outOfOrder(let expected):
            text = ServerFrame.error(
                .outOfOrder, "this client's next command is number \(expected): send the commands before this one first",
                ref: request.ref, cid: request.cid, seq: request.seq, expected: expected)
        case .clientExpired(let message):
            text = ServerFrame.error(.clientExpired, message, ref: request.ref, cid: request.cid, seq: request.seq)
        }
        guard let text else {
            outbox.placesHeld -= 1
            return
        }
        enqueue(Outgoing(text: text, holdsPlace: true))
    }

    /// The version a patch for this client should start from, when it needs one to reach `head`: it is
    /// live, its version is not `head`, and no snapshot or patch of its still waits in the outbox.
    public func wantsSync(head: Int) -> Int? {
        guard let base = syncBase, base != head else { return nil }
        return base
    }

    /// The version a patch for this client would start from, whatever the head: its version while it is
    /// live and no snapshot or patch of its waits in the outbox; else nil.
    var syncBase: Int? {
        guard case .live = state, let version, !outbox.syncWaiting else { return nil }
        return mustSnapshot ? Self.needsSnapshot : version
    }

    /// Queues `frame` (a patch from version `from`, or a snapshot) that brings the client to version
    /// `to`, if the client is still at `from` (see ``wantsSync(head:)``).
    ///
    /// - Returns: Whether the frame was queued.
    @discardableResult
    public mutating func sync(_ frame: String, from: Int, to: Int) -> Bool {
        sync(LiveFrame(frame), from: from, to: to)
    }

    /// Queues `frame` as ``sync(_:from:to:)-(String,_,_)`` does, with the hub's shared frame.
    @discardableResult
    mutating func sync(_ frame: LiveFrame, from: Int, to: Int) -> Bool {
        guard syncBase == from else { return false }
        enqueue(Outgoing(frame: frame, isSync: true))
        guard case .live = state else { return false }
        version = to
        mustSnapshot = false
        outbox.syncWaiting = true
        return true
    }

    /// The hello time limit passed: unless the client was admitted, it gets an error frame (code
    /// `hello_timeout`) and the close (4408).
    public mutating func helloTimedOut() {
        switch state {
        case .awaitingHello:
            fail(.helloTimeout, "no hello came in time", ref: nil, closing: .helloTimeout)
        case .authenticating(_, let helloRef, _):
            fail(.helloTimeout, "the hello was not decided in time", ref: helloRef, closing: .helloTimeout)
        case .live, .closing, .closed:
            break
        }
    }

    /// The server is shutting down: the frames in the outbox are written, then the close (1001).
    public mutating func shutDown() {
        switch state {
        case .closing, .closed: break
        default: state = .closing(.goingAway, reason: "the server is shutting down")
        }
    }

    /// The transport closed: the outbox is dropped and nothing more is written.
    public mutating func transportClosed() {
        state = .closed
        outbox.drop()
    }

    /// Takes what to write next: every frame in the outbox, to go out in one write, else the close once
    /// the session is closing; nil when there is nothing (or the session is closed).
    ///
    /// Write what it returns before taking more: the outbox, not the transport, is where frames wait, so
    /// that its bounds hold. Let go of the returned frames before the next call, and the session reuses
    /// their array: in the steady state taking frames allocates nothing.
    ///
    /// - Complexity: O(*n*) in the frames taken; a snapshot or patch is the hub's shared frame, not a copy.
    public mutating func takeBatch() -> LiveWrite? {
        if !outbox.frames.isEmpty { return .frames(outbox.take()) }
        guard case .closing(let code, let reason) = state else { return nil }
        state = .closed
        sentClose = code
        return .close(code, reason: reason)
    }

    /// Takes what to write next, with the frames as `String`s: what ``takeBatch()`` takes.
    @available(*, deprecated, message: "use takeBatch(), which returns the frames as LiveFrame values (their text is .text) and the close as LiveWrite.close")
    public mutating func takeWrite() -> Write? {
        takeBatch().map(Write.init)
    }

    /// Lets go of the frames the last ``takeBatch()`` returned, once the driver has written them (it asks
    /// for more and nothing waits), so that an idle connection keeps no frame alive.
    mutating func releaseTaken() {
        outbox.releaseTaken()
    }

    /// `request`, numbered by `client` when it has a `seq`.
    private func numbered(_ request: LiveCommandRequest<Command>, by client: LiveClientID?) -> LiveCommandRequest<Command> {
        guard request.seq != nil else { return request }
        var request = request
        request.client = client
        return request
    }

    /// Takes a window place for `request`, or queues a `window_full` error and returns false.
    private mutating func takePlace(for request: LiveCommandRequest<Command>) -> Bool {
        guard outbox.placesHeld < limits.window else {
            enqueue(Outgoing(text: ServerFrame.error(
                .windowFull, "\(limits.window) commands are unanswered; wait for an answer", ref: request.ref, cid: request.cid,
                seq: request.seq)))
            return false
        }
        outbox.placesHeld += 1
        return true
    }

    /// Queues an error frame, then closes with `closing`.
    private mutating func fail(_ code: LiveErrorCode, _ message: String, ref: Int?, closing: LiveCloseCode) {
        enqueue(Outgoing(text: ServerFrame.error(code, message, ref: ref)))
        if case .closed = state { return }
        state = .closing(closing, reason: code.rawValue)
    }

    /// Queues a frame; past ``LiveLimits/maxQueuedFrames`` the outbox is dropped and the session closes
    /// (``LiveCloseCode/tooSlow``).
    private mutating func enqueue(_ frame: Outgoing) {
        switch state {
        case .closed: return
        case .closing(let code, _) where code == .tooSlow: return
        default: break
        }
        guard outbox.frames.count < limits.maxQueuedFrames else {
            outbox.drop()
            state = .closing(.tooSlow, reason: "the client read too slowly")
            return
        }
        outbox.frames.append(frame)
    }
}

extension LiveSession.Write {
    /// The same write, with the frames' text.
    init(_ write: LiveWrite) {
        switch write {
        case .frames(let frames): self = .frames(frames.map(\.text))
        case .close(let code, let reason): self = .close(code, reason: reason)
        }
    }
}

/// A frame waiting in a session's outbox. Outside ``LiveSession`` so that it is not generic: the
/// per-frame code that reads it needs no type metadata looked up.
struct LiveOutgoingFrame: Sendable {
    var frame: LiveFrame
    /// Holds one of the window's places until it is taken (an answer to a command).
    var holdsPlace = false
    /// A snapshot or patch.
    var isSync = false
    /// A presence frame.
    var isPresence = false

    init(frame: LiveFrame, holdsPlace: Bool = false, isSync: Bool = false, isPresence: Bool = false) {
        self.frame = frame
        self.holdsPlace = holdsPlace
        self.isSync = isSync
        self.isPresence = isPresence
    }

    init(text: String, holdsPlace: Bool = false, isSync: Bool = false) {
        self.init(frame: LiveFrame(text), holdsPlace: holdsPlace, isSync: isSync)
    }
}

/// A session's outbox: the frames waiting, in order, and what taking them gives back (window places,
/// the view frame). Not generic, so that the per-frame work runs as compiled, with no type metadata
/// looked up.
///
/// Both arrays keep their capacity: ``take()`` fills the array it handed out last time (once its
/// taker let go of it), so in the steady state queuing and taking frames allocates nothing.
struct LiveOutbox: Sendable {
    var frames: [LiveOutgoingFrame] = []
    /// The array ``take()`` returned last, reused by the next take once the driver let go of it.
    private var taken: [LiveFrame] = []
    /// Window places held: commands submitted or held, and answers not yet taken.
    var placesHeld = 0
    /// A snapshot or patch waits in the outbox.
    var syncWaiting = false

    /// Takes every frame waiting: the window places their answers held are given back, and a view frame
    /// among them is no longer waiting.
    mutating func take() -> [LiveFrame] {
        // Unique again once the driver let go of the last batch: cleared in place, no allocation.
        taken.removeAll(keepingCapacity: true)
        taken.reserveCapacity(frames.count)
        // One pass, without key paths: this runs once per frame written.
        for frame in frames {
            taken.append(frame.frame)
            if frame.holdsPlace { placesHeld -= 1 }
            if frame.isSync { syncWaiting = false }
        }
        frames.removeAll(keepingCapacity: true)
        return taken
    }

    /// Lets go of the frames last taken (their array keeps its capacity).
    mutating func releaseTaken() {
        if !taken.isEmpty { taken.removeAll(keepingCapacity: true) }
    }

    /// Puts `whole` in the place of the presence frame that waits; false when none waits.
    mutating func replacePresence(with whole: LiveFrame) -> Bool {
        guard let waiting = frames.firstIndex(where: { $0.isPresence }) else { return false }
        frames[waiting].frame = whole
        return true
    }

    /// Drops every frame (the connection closed, or its client read too slowly).
    mutating func drop() {
        frames = []
        taken = []
        placesHeld = 0
        syncWaiting = false
    }
}

/// The bounds of one connection.
public struct LiveLimits: Sendable, Equatable {
    /// How many of a client's commands may be unanswered at once (submitted, or answered with a frame
    /// the client has not been written yet). A command beyond them gets a `window_full` error.
    public var window: Int
    /// The longest client frame decoded, in UTF-8 bytes; a longer one gets a `too_large` error.
    public var maxFrameBytes: Int
    /// The most frames that may wait for a client; past it the connection closes (4429).
    public var maxQueuedFrames: Int

    /// Creates limits.
    ///
    /// - Parameters:
    ///   - window: Commands unanswered at once, at least 1 (64 by default).
    ///   - maxFrameBytes: The longest client frame, at least 64 bytes (16 KiB by default).
    ///   - maxQueuedFrames: Frames waiting for a client, more than `window` (`window` + 16 by default: an
    ///     answer per place, the welcome, one snapshot or patch, and room for error frames).
    public init(window: Int = 64, maxFrameBytes: Int = 16_384, maxQueuedFrames: Int? = nil) {
        precondition(window >= 1, "LiveLimits(window:) must be at least 1 (got \(window))")
        precondition(maxFrameBytes >= 64, "LiveLimits(maxFrameBytes:) must be at least 64 (got \(maxFrameBytes))")
        let queued = maxQueuedFrames ?? window + 16
        precondition(queued > window + 2, "LiveLimits(maxQueuedFrames:) must be more than window + 2 (got \(queued))")
        self.window = window
        self.maxFrameBytes = maxFrameBytes
        self.maxQueuedFrames = queued
    }
}
