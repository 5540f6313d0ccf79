import Foundation
import Synchronization

/// One client's connection to a ``LiveHub``: what an adapter feeds the client's frames to and takes the
/// frames to write from.
///
/// An adapter (a WebSocket server, a test) does three things and nothing else:
///
/// 1. each text frame the client sends goes to ``receive(_:)``, each binary frame to ``receiveBinary()``;
/// 2. a loop writes what ``nextBatch()`` returns — every frame waiting, in order and with one flush, then
///    the close with its code — awaiting each write before asking for more, until it returns nil; or,
///    with no task waiting, the adapter is told when to write (``writeWhenReady(_:)``) and takes what
///    waits with ``takeBatch()``;
/// 3. when the socket closes, ``transportClosed()``.
///
/// The adapter owns the connection (the hub holds it weakly); the connection keeps its hub alive.
///
/// The connection runs a ``LiveSession`` behind a lock and does its work outside it: it asks the
/// service to check the client's credentials, submits its commands to the hub in the order they came,
/// and closes the connection when no hello came within ``LiveOptions/helloTimeout``.
public final class LiveConnection<Service: LiveService>: Sendable {
    private typealias Session = LiveSession<Service.Command, Service.Identity>

    private struct Driver {
        var session: Session
        /// The adapter's write loop: waiting for something to write, or cancelled before it could wait.
        var waiter = WriteWaiter.idle
        var timer: Task<Void, Never>?
        /// Ends the session when the client's credentials expire (while it is live).
        var expiry: Task<Void, Never>?
        /// The audience the client was admitted to.
        var audience: Service.Audience?
        /// The client id under which the connection is in the hub's presence list, once it joined.
        var present: LiveClientID?
        var removed = false
        /// The end of a connection whose view cannot be sent: the frames the session held, the
        /// `view_unavailable` error, then the close (1011). Written before anything else; the session
        /// is closed by then and queues nothing more.
        var ending: [LiveWrite] = []
        /// The connection's part in the observer's reports; nil when nobody observes.
        let trace: LiveConnectionTrace?

        /// Whether ``takeBatch()`` has something: the ending, frames, or the close.
        var hasWrite: Bool {
            !ending.isEmpty || session.hasWrite
        }

        /// Where the connection is, as the adapter sees it: closing while the ending is not written.
        var phase: Session.Phase {
            ending.isEmpty ? session.phase : .closing
        }

        /// Whether nothing more will ever be written.
        var isFinished: Bool {
            ending.isEmpty && session.phase == .closed
        }

        /// Takes what to write next: the ending, else what the session has.
        mutating func takeBatch() -> LiveWrite? {
            if !ending.isEmpty { return ending.removeFirst() }
            return session.takeBatch()
        }

        /// Ends the connection because the view it needs cannot be sent: the frames the session holds
        /// are kept, then the error frame and the close. Only while the client is being admitted or is
        /// live; a connection already closing ends as it was going to.
        mutating func viewUnavailable(_ message: String) {
            guard session.phase == .authenticating || session.phase == .live else { return }
            var frames: [LiveFrame] = []
            if case .frames(let held)? = session.takeBatch() { frames = held }
            session.transportClosed()
            frames.append(LiveFrame(ServerFrame.error(.viewUnavailable, message, ref: nil)))
            ending = [.frames(frames), .close(.serverError, reason: LiveErrorCode.viewUnavailable.rawValue)]
            trace?.closeTaken(.serverError)
        }

        /// What follows from the session's phase, added to `handoff`: the hello timer to stop once the
        /// client is past the hello (taken once), and whether the hub must now forget the connection
        /// (true once, when closed).
        mutating func takeFinished(into handoff: inout LiveHandoff) {
            let phase = session.phase
            if phase != .awaitingHello && phase != .authenticating, let timer {
                handoff.timers.append(timer)
                self.timer = nil
            }
            if phase == .closing || phase == .closed, let expiry {
                handoff.timers.append(expiry)
                self.expiry = nil
            }
            guard phase == .closed, !removed else { return }
            removed = true
            handoff.remove = true
        }
    }

    private let hub: LiveHub<Service>
    private let driver: LiveLock<Driver>
    /// The session's ``LiveSession/wantsSync(head:)`` base (its version, while a patch may be sent), or
    /// `Int.min` for none: stored at the end of every section of the lock that may change the session,
    /// read by the hub's tick without the lock (``sync(_:from:to:)`` checks again under it), so a tick
    /// takes no lock for a connection that wants nothing.
    private let syncBase = Atomic<Int>(Int.min)
    /// The number of the audience the client was admitted to (``LiveHubShared/admit(_:to:)``), or
    /// `Int.min` before: read by the tick without a lock.
    let audienceIndex = Atomic<Int>(Int.min)
    /// Numbers the calls of ``nextBatch()``, so that a cancellation is matched to its own call (the
    /// lock orders what the waiter does with the number; the count itself needs no order).
    private let calls = Atomic<UInt64>(0)
    /// The connection's part in the observer's reports; nil when nobody observes.
    private let trace: LiveConnectionTrace?

    init(hub: LiveHub<Service>, transport: [String: String]) {
        self.hub = hub
        trace = hub.reporter?.connectionOpened()
        driver = LiveLock(Driver(session: Session(limits: hub.options.limits, transport: transport), trace: trace))
        guard hub.shared.add(self) else {
            driver.withLock { $0.session.shutDown() }
            return
        }
        let timeout = hub.options.helloTimeout
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.update { $0.helloTimedOut() }
        }
        driver.withLock { $0.timer = timer }
    }

    deinit {
        // An adapter that let go of the connection without closing it: its entry leaves all the same.
        if let present = driver.withLock({ $0.present }) { hub.shared.leave(present) }
        trace?.closed(sent: driver.withLock { $0.session.sentClose })
    }

    /// Where the connection's session is in its life.
    public var phase: LiveSession<Service.Command, Service.Identity>.Phase {
        driver.withLock { $0.phase }
    }

    /// The id the client numbers its commands under, once admitted (its hello's, or the one its welcome
    /// gave); nil before.
    public var client: LiveClientID? {
        driver.withLock { $0.session.client }
    }

    /// Who the client is while it is live (as ``LiveService/authenticate(_:)`` or its last `reauth`
    /// admitted it); nil in every other phase.
    public var identity: Service.Identity? {
        driver.withLock { $0.session.identity }
    }

    /// Whether ``nextBatch()`` would return at once (frames are waiting, or the close).
    public var hasWrite: Bool {
        driver.withLock { !$0.ending.isEmpty || $0.session.hasWrite }
    }

    /// How many frames wait to be written: never more than ``LiveLimits/maxQueuedFrames`` (one more
    /// when the view cannot be sent: the `view_unavailable` error before the close).
    public var queuedFrames: Int {
        driver.withLock { driver in
            driver.ending.reduce(driver.session.queuedFrames) { count, write in
                if case .frames(let frames) = write { count + frames.count } else { count }
            }
        }
    }

    /// Takes a text frame the client sent.
    ///
    /// The frame is decoded here (outside every lock); a frame that does not decode gets an error frame.
    public func receive(_ text: String) {
        do {
            let frame = try LiveClientFrame<Service.Command>.decode(text, maxBytes: hub.options.limits.maxFrameBytes)
            run { $0.receive(frame) }
        } catch {
            update { $0.receive(invalid: error) }
        }
    }

    /// Takes a binary frame the client sent: it gets an error frame (frames are JSON text).
    public func receiveBinary() {
        update { $0.receiveBinary() }
    }

    /// The socket closed: nothing more is written, and the hub forgets the connection.
    public func transportClosed() {
        updateDriver { driver in
            // An ending not written yet (the view could not be sent) is dropped with the outbox.
            driver.ending.removeAll()
            driver.session.transportClosed()
        }
    }

    /// Waits for what to write next: every frame waiting for the client, to go out in one write (write
    /// them in order, then flush once, and wait for the write before asking again), or the close (send it
    /// with its code and reason, then stop). Nil once the connection is closed; also nil, at once, when
    /// the calling task is cancelled (before the call or while it waits), and what was to be written stays
    /// for the next call.
    ///
    /// A snapshot or patch in the batch is the hub's frame, shared with every client of the same audience
    /// at the same version (``LiveFrame/sharesStorage(with:)``): write its bytes as they are. Let go of
    /// the batch before asking again, and the connection reuses its array: in the steady state a batch
    /// allocates nothing, and a write loop that waits is resumed once per batch, however many frames it holds.
    public func nextBatch() async -> LiveWrite? {
        let call = calls.wrappingAdd(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            // Resumed exactly once: here when something is ready, else by the section that hands the
            // waiter its write, or by the cancellation (`WriteWaiter` keeps the one continuation).
            await withUnsafeContinuation { (continuation: UnsafeContinuation<LiveWrite?, Never>) in
                var handoff = LiveHandoff()
                let ready = driver.withLock { driver -> Bool in
                    precondition(!driver.waiter.isPushing,
                                 "LiveConnection.nextBatch() was called on a connection that writes through writeWhenReady(_:)")
                    // A cancellation that came before this point is a state of the waiter, not a race.
                    if driver.waiter.takeCancellation(of: call) { return true }
                    handoff.write = driver.takeBatch()
                    if handoff.write != nil || driver.isFinished {
                        endSection(&driver, &handoff)
                        return true
                    }
                    // The write loop let go of its last batch: so does the session (an idle connection
                    // keeps no frame alive).
                    driver.session.releaseTaken()
                    driver.waiter.suspend(call: call, continuation)
                    return false
                }
                if ready {
                    continuation.resume(returning: handoff.write)
                    finish(handoff)
                }
            }
        } onCancel: {
            driver.withLock { $0.waiter.cancel(call: call) }?.resume(returning: nil)
        }
    }

    /// Has the connection hand its batches to the adapter as they come, instead of a task waiting in
    /// ``nextBatch()``: when something waits to be written and the adapter is not busy with a batch,
    /// `write` is called with it (every frame waiting, or the close). The adapter writes it, then calls
    /// ``takeBatch()`` and writes what it returns (what came meanwhile) until it returns nil; the batch
    /// after that comes to `write` again. So batches reach the adapter one at a time and in order.
    ///
    /// `write` is called outside every lock of the connection, on whichever thread queued the frame (the
    /// hub's tick, an answer to a command, the adapter's own read): keep it short and let it hand the
    /// batch to the adapter's own thread (a socket's event loop), which writes it and then calls
    /// ``takeBatch()``. It is called at once when something waits already. The connection holds `write`
    /// (and what it captures) until nothing more will be written: the close handed over, or
    /// ``transportClosed()`` called; so a `write` that captures the connection strongly keeps it alive
    /// until then (capture it weakly if the adapter may let go of the connection without closing it). A
    /// batch taken just before ``transportClosed()`` may still reach `write` after it returns: ignore
    /// it then.
    ///
    /// An adapter that cannot write for a while (its socket is saturated) just waits before calling
    /// ``takeBatch()``: frames then wait in the connection's outbox, where the hub bounds them.
    ///
    /// ```swift
    /// import StillwaterLive
    ///
    /// struct Tally: Codable, Sendable { var votes = 0 }
    /// struct Vote: Action, Codable, Sendable { func reduce(_ state: inout Tally) { state.votes += 1 } }
    /// struct TallyView: LiveView {
    ///     var total: Int
    ///     static let liveFields: [LiveField<TallyView>] = [.value("total", \.total)]
    /// }
    /// struct Poll: LiveService {
    ///     func view(of state: Tally) -> TallyView { TallyView(total: state.votes) }
    ///     func decide(_ command: String, state: Tally, identity: String) -> LiveDecision<Vote> { .accept(Vote()) }
    ///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("guest") }
    /// }
    /// let hub = try await LiveHub.open(Poll(), log: MemoryJournal<LiveLogState<Tally>, LiveEntry<Vote>>(), initial: Tally())
    /// let connection = hub.connect()
    /// // A socket's writer would hop to its event loop here; this one writes on the spot.
    /// connection.writeWhenReady { [weak connection] first in
    ///     var write: LiveWrite? = first
    ///     while case .frames(let frames)? = write {
    ///         print(frames.map { $0.text.split(separator: "\"")[3] }.joined(separator: ", "))
    ///         write = connection?.takeBatch()
    ///     }
    /// }
    /// connection.receive(#"{"type":"hello","protocol":1}"#)
    /// while connection.phase != .live { try await Task.sleep(for: .milliseconds(5)) }  // checked in a task
    /// _ = await hub.perform("yes", as: "guest")
    /// hub.tick()                                            // run() does this every patch interval
    /// // Prints "welcome, snapshot",
    /// //        "patch"
    /// ```
    ///
    /// Cost: no task and no continuation; one call of `write` per batch, however many frames it holds.
    ///
    /// - Precondition: Called at most once, and not while ``nextBatch()`` waits.
    public func writeWhenReady(_ write: @escaping @Sendable (LiveWrite) -> Void) {
        var handoff = LiveHandoff()
        driver.withLock { driver in
            precondition(!driver.waiter.isWaiting, "LiveConnection.writeWhenReady(_:) was called while nextBatch() waits")
            precondition(!driver.waiter.isPushing, "LiveConnection.writeWhenReady(_:) was called twice")
            guard !driver.isFinished else { return }
            handoff.write = driver.takeBatch()
            // Handed the close already: nothing more will come, so `write` is not kept.
            if !driver.isFinished { driver.waiter = .pushing(write, armed: handoff.write == nil) }
            endSection(&driver, &handoff)
        }
        if let batch = handoff.write { write(batch) }
        finish(handoff)
    }

    /// Takes what to write now, without waiting: every frame waiting for the client (write them in
    /// order, then flush once), or the close (send it with its code and reason; nothing follows); nil when
    /// nothing waits. With ``writeWhenReady(_:)``, after a nil answer the next batch comes to its `write`.
    ///
    /// A snapshot or patch in the batch is the hub's frame, shared with every client of the same audience
    /// at the same version: write its bytes as they are. Let go of the batch before the call that returns
    /// nil, and the connection reuses its array: in the steady state a batch allocates nothing.
    public func takeBatch() -> LiveWrite? {
        var handoff = LiveHandoff()
        // Let go of outside the lock once nothing more will be written.
        var retired: LivePushTarget?
        driver.withLock { driver in
            handoff.write = driver.takeBatch()
            if handoff.write == nil {
                // The adapter let go of its last batch: so does the session (an idle connection keeps no
                // frame alive), and the next batch goes to the adapter's `write`.
                driver.session.releaseTaken()
                driver.waiter.arm()
            }
            if driver.isFinished { retired = driver.waiter.stopPushing() }
            endSection(&driver, &handoff)
        }
        finish(handoff)
        withExtendedLifetime(retired) {}
        return handoff.write
    }

    /// Waits for what to write next, with the frames as `String`s: what ``nextBatch()`` returns.
    @available(*, deprecated, message: "use nextBatch(), which returns the frames as LiveFrame values (shared bytes; their text is .text) and the close as LiveWrite.close")
    public func nextWrite() async -> LiveSession<Service.Command, Service.Identity>.Write? {
        await nextBatch().map(Session.Write.init)
    }

    // MARK: The hub's side

    func wantsSync(head: Int) -> Int? {
        let base = syncBase.load(ordering: .acquiring)
        return base == Int.min || base == head ? nil : base
    }

    /// Queues `frame`, which brings the client from version `from` to `to`, if the client is still at
    /// `from`; when that view cannot be sent, ends the connection with `view_unavailable` and 1011.
    func sync(_ frame: LiveViewText, from: Int, to: Int) {
        switch frame {
        case .frame(let frame):
            apply { $0.session.sync(frame, from: from, to: to) }
        case .unavailable(let message):
            apply { driver in
                guard driver.session.syncBase == from else { return }
                driver.viewUnavailable(message)
            }
        }
    }

    func shutDown() {
        update { $0.shutDown() }
    }

    /// Ends the session with `disconnected` and 4403 when its client is live or being admitted and,
    /// once live, its identity matches; `matches` runs outside the lock. True when it was ended.
    func disconnect(where matches: (Service.Identity) -> Bool, reason: String) -> Bool {
        let (phase, identity) = driver.withLock { ($0.session.phase, $0.session.identity) }
        switch phase {
        case .live:
            guard let identity, matches(identity) else { return false }
        case .authenticating:
            // Not admitted yet: its identity is still being decided, so the check applies once it is.
            return false
        case .awaitingHello, .closing, .closed:
            return false
        }
        return update { session in
            guard session.phase == .live else { return false }
            session.disconnect(reason: reason)
            return true
        }
    }

    // MARK: Running the session

    /// Runs `body` on the session under the lock, then hands a waiting writer what there is to write.
    /// One section of the lock per call: it runs once or more per frame.
    @discardableResult
    private func update<R>(_ body: (inout Session) -> R) -> R {
        var result: R?
        apply { result = body(&$0.session) }
        return result!
    }

    /// Runs `body` on the driver (the session and the connection's own ending) under the lock, then
    /// hands a waiting writer what there is to write.
    @discardableResult
    private func updateDriver<R>(_ body: (inout Driver) -> R) -> R {
        var result: R?
        apply { result = body(&$0) }
        return result!
    }

    /// The one section of the lock that changes the driver: runs `body`, hands a waiting write loop what
    /// there is to write (resumed outside the lock), and does what the session's phase asks. Not generic
    /// in what `body` returns, so the per-frame calls (a patch for every connection) look up no type
    /// metadata for a result.
    private func apply(_ body: (inout Driver) -> Void) {
        var handoff = LiveHandoff()
        // The adapter that writes pushed batches, to hand `handoff.write` to (or only to let go of, once
        // nothing more will be written): called, or released, outside the lock.
        var pushed: LivePushTarget?
        driver.withLock { driver in
            body(&driver)
            switch driver.waiter {
            case .waiting:
                handoff.write = driver.takeBatch()
                if handoff.write != nil || driver.isFinished { handoff.waiter = driver.waiter.resume() }
            case .pushing:
                if driver.hasWrite, let target = driver.waiter.fire() {
                    handoff.write = driver.takeBatch()
                    pushed = target
                }
                if driver.isFinished, let target = driver.waiter.stopPushing(), pushed == nil { pushed = target }
            case .idle, .cancelledBeforeSuspend:
                break
            }
            endSection(&driver, &handoff)
        }
        if let waiter = handoff.waiter {
            waiter.resume(returning: handoff.write)
        } else if let pushed, let write = handoff.write {
            pushed(write)
        }
        finish(handoff)
    }

    /// Ends a section of the lock that may have changed the session: stores its sync base for the tick
    /// (and asks for a tick when the client just took its view frame and is still behind), and adds to
    /// `handoff` what ``Driver/takeFinished(into:)`` says is to be done outside the lock.
    private func endSection(_ driver: inout Driver, _ handoff: inout LiveHandoff) {
        let base = driver.session.syncBase ?? Int.min
        if syncBase.exchange(base, ordering: .acquiringAndReleasing) == Int.min, base != Int.min {
            hub.shared.synced(at: base)
        }
        driver.takeFinished(into: &handoff)
    }

    /// Stops the timers and forgets the connection in the hub (and its presence), as
    /// ``Driver/takeFinished(into:)`` said.
    private func finish(_ handoff: LiveHandoff) {
        for timer in handoff.timers { timer.cancel() }
        guard handoff.remove else { return }
        hub.shared.remove(self)
        trace?.closed(sent: driver.withLock { $0.session.sentClose })
        if let present = driver.withLock({ driver -> LiveClientID? in
            defer { driver.present = nil }
            return driver.present
        }) {
            hub.shared.leave(present)
        }
    }

    /// Queues a presence frame (see ``LiveSession/presence(changes:whole:)``).
    func presence(changes: LiveFrame, whole: LiveFrame) {
        apply { $0.session.presence(changes: changes, whole: whole) }
    }

    /// Puts the admitted client in the hub's presence list and sends it the whole list, when the service
    /// shows it. The entry is made outside every lock (the service's code and its `Encodable`).
    private func joinPresence(as identity: Service.Identity) {
        guard LiveHubShared<Service>.showsPresence, let entry = hub.service.presence(of: identity) else { return }
        let json: String
        do {
            json = try LiveJSON.text(of: entry)
        } catch {
            return updateDriver { $0.viewUnavailable("the presence entry cannot be sent: \(LiveJSON.describe(encoding: error))") }
        }
        // Joined under the connection's lock (the hub's lock is taken inside it, the one order allowed),
        // so that a close, whose removal takes the entry out, always comes after the join.
        let whole = driver.withLock { driver -> String? in
            guard driver.session.phase == .live, driver.present == nil, let client = driver.session.client else { return nil }
            driver.present = client
            return hub.shared.join(client, entry: json)
        }
        if let whole {
            let frame = LiveFrame(whole)
            apply { $0.session.presence(changes: frame, whole: frame) }
        }
    }

    /// Runs `body` on the session and does the work it asks for. Commands are submitted to the hub
    /// under the connection's lock, so they reach it in the order the session released them (the hub
    /// never takes a connection's lock while holding its own); credentials are checked in a task of
    /// their own.
    private func run(_ body: (inout Session) -> [Session.Effect]) {
        let checks = update { session -> [Check] in
            var checks: [Check] = []
            for effect in body(&session) {
                switch effect {
                case .authenticate(let handshake, let resume):
                    checks.append(.hello(handshake, resume: resume))
                case .submit(let request, let identity):
                    let submission = LiveSubmission<Service>(
                        command: request.command, cid: request.cid, client: request.client, seq: request.seq, identity: identity,
                        origin: trace?.command()
                    ) {
                        [weak self] outcome in self?.update { $0.answered(request, with: outcome) }
                    }
                    if !hub.shared.submit(submission) {
                        session.answered(request, with: .unavailable(LiveHub<Service>.closedMessage))
                    }
                case .reauthenticate(let handshake, let ref):
                    checks.append(.reauth(handshake, ref: ref))
                }
            }
            return checks
        }
        for check in checks {
            switch check {
            case .hello(let handshake, let resume): Task { await self.authenticate(handshake, resume: resume) }
            case .reauth(let handshake, let ref): Task { await self.reauthenticate(handshake, ref: ref) }
            }
        }
    }

    /// Credentials to check, outside the lock: a hello's or a `reauth`'s.
    private enum Check {
        case hello(LiveHandshake, resume: LiveResume?)
        case reauth(LiveHandshake, ref: Int?)
    }

    /// What ``LiveService/authenticate(_:)`` decided, with an expiry already past counted as a refusal.
    private func check(_ handshake: LiveHandshake) async -> Result<(Service.Identity, Date?), Refusal> {
        switch await hub.service.authenticate(handshake) {
        case .accepted(let identity):
            return .success((identity, nil))
        case .acceptedUntil(let identity, let expires):
            guard expires > hub.options.now() else { return .failure(Refusal(message: nil)) }
            return .success((identity, expires))
        case .refused(let message):
            return .failure(Refusal(message: message))
        }
    }

    /// Why credentials were not accepted: the service's message, or nil for credentials that had
    /// expired already (answered `token_expired`, 4419).
    private struct Refusal: Error {
        var message: String?
    }

    /// Ends the session when `expires` comes (by ``LiveOptions/now``), replacing the timer set before.
    private func expire(at expires: Date?) {
        let timer = expires.map { expires in
            Task { [weak self, hub] in
                let left = expires.timeIntervalSince(hub.options.now())
                if left > 0 { try? await Task.sleep(for: .milliseconds(Int64((left * 1_000).rounded(.up)))) }
                guard !Task.isCancelled else { return }
                self?.update { $0.expired() }
            }
        }
        let (replaced, kept) = driver.withLock { driver -> (Task<Void, Never>?, Bool) in
            let replaced = driver.expiry
            let live = driver.session.phase == .live
            driver.expiry = live ? timer : nil
            return (replaced, live)
        }
        replaced?.cancel()
        if !kept { timer?.cancel() }
    }

    /// What the welcome's `you` member says about `identity`, as JSON text: nil when the service tells
    /// nothing, or (as a failure) why it cannot be sent.
    private func profile(of identity: Service.Identity) -> Result<String?, Refusal> {
        guard let profile = hub.service.profile(of: identity) else { return .success(nil) }
        do {
            return .success(try LiveJSON.text(of: profile))
        } catch {
            return .failure(Refusal(message: "the welcome's \"you\" cannot be sent: \(LiveJSON.describe(encoding: error))"))
        }
    }

    private func reauthenticate(_ handshake: LiveHandshake, ref: Int?) async {
        switch await check(handshake) {
        case .success(let (identity, expires)):
            let audience = hub.service.audience(of: identity)
            let moved = driver.withLock { driver -> Bool in
                guard driver.session.phase == .live else { return false }
                defer { driver.audience = audience }
                return driver.audience != audience
            }
            if moved { hub.shared.admit(self, to: audience) }
            update { session in
                if moved { session.resync() }
                session.reauthenticated(as: identity, expires: expires, ref: ref)
            }
            expire(at: expires)
        case .failure(let refusal):
            update { session in
                if let message = refusal.message { session.refused(message, ref: ref) } else { session.expired() }
            }
        }
    }

    private func authenticate(_ handshake: LiveHandshake, resume: LiveResume?) async {
        switch await check(handshake) {
        case .success(let (identity, expires)):
            let audience = hub.service.audience(of: identity)
            driver.withLock { $0.audience = audience }
            // In its audience before it is live, so that no tick passes it by.
            hub.shared.admit(self, to: audience)
            let you: String?
            switch profile(of: identity) {
            case .success(let text): you = text
            case .failure(let failure): return updateDriver { $0.viewUnavailable(failure.message ?? "the welcome cannot be sent") }
            }
            let frame: (text: LiveViewText, version: Int)
            if let resume, resume.stream == hub.stream {
                frame = hub.shared.syncFrame(for: audience, from: resume.version, to: hub.shared.head, stream: hub.stream)
            } else {
                frame = hub.shared.snapshotFrame(for: audience, stream: hub.stream)
            }
            guard case .frame(let sync) = frame.text else {
                if case .unavailable(let message) = frame.text { updateDriver { $0.viewUnavailable(message) } }
                return
            }
            let client = hub.newClient()
            // Told before the welcome is queued, so an observer hears of the admission first.
            trace?.admitted(identity: hub.service.observedIdentity(of: identity))
            hub.reporter?.viewFrame(frame.text, connections: 1)
            run {
                $0.authenticated(as: identity, client: client, stream: hub.stream, sync: sync, version: frame.version, you: you,
                                 expires: expires)
            }
            joinPresence(as: identity)
            expire(at: expires)
        case .failure(let refusal):
            update { session in
                if let message = refusal.message { session.refused(message) } else { session.expired() }
            }
        }
    }
}

/// Where the adapter's writer is: no call of ``LiveConnection/nextBatch()`` waiting, one waiting, one
/// cancelled before it could wait; or an adapter told when to write (``LiveConnection/writeWhenReady(_:)``).
///
/// The cancellation handler of a call may run before the call stores its continuation (always, when
/// the task was cancelled before the call). It then leaves `cancelledBeforeSuspend` for the call to
/// find, and the call returns nil at once instead of waiting for a resume that would never come. Calls
/// are numbered, so a cancellation that comes too late for its own call is dropped by the next.
enum WriteWaiter: Sendable {
    case idle
    case waiting(call: UInt64, UnsafeContinuation<LiveWrite?, Never>)
    case cancelledBeforeSuspend(call: UInt64)
    /// The adapter is handed its batches (``LiveConnection/writeWhenReady(_:)``): `armed` once its
    /// ``LiveConnection/takeBatch()`` found nothing, so that the next batch goes to its `write`.
    case pushing(LivePushTarget, armed: Bool)

    /// Whether a call waits.
    var isWaiting: Bool {
        if case .waiting = self { return true }
        return false
    }

    /// Whether the adapter is told when to write.
    var isPushing: Bool {
        if case .pushing = self { return true }
        return false
    }

    /// The adapter's `write`, to hand a batch to (outside the lock) when it is armed; disarmed until the
    /// adapter next finds nothing to take.
    mutating func fire() -> LivePushTarget? {
        guard case .pushing(let write, armed: true) = self else { return nil }
        self = .pushing(write, armed: false)
        return write
    }

    /// The adapter took everything: the next batch goes to its `write`.
    mutating func arm() {
        if case .pushing(let write, armed: false) = self { self = .pushing(write, armed: true) }
    }

    /// Nothing more will be written: the adapter's `write`, to let go of outside the lock.
    mutating func stopPushing() -> LivePushTarget? {
        guard case .pushing(let write, _) = self else { return nil }
        self = .idle
        return write
    }

    /// Call `call` was cancelled: its continuation when it waits (to resume with nil, outside the
    /// lock); else the cancellation is kept for the call to find.
    mutating func cancel(call: UInt64) -> UnsafeContinuation<LiveWrite?, Never>? {
        switch self {
        case .waiting(let waiting, let continuation):
            guard waiting == call else { return nil }
            self = .idle
            return continuation
        case .idle, .cancelledBeforeSuspend:
            self = .cancelledBeforeSuspend(call: call)
            return nil
        case .pushing:
            return nil
        }
    }

    /// Whether call `call` was cancelled before it could wait. A cancellation kept for an earlier call
    /// is dropped.
    mutating func takeCancellation(of call: UInt64) -> Bool {
        guard case .cancelledBeforeSuspend(let cancelled) = self else { return false }
        self = .idle
        return cancelled == call
    }

    /// Call `call` waits with `continuation`.
    mutating func suspend(call: UInt64, _ continuation: UnsafeContinuation<LiveWrite?, Never>) {
        precondition(!isWaiting, "LiveConnection.nextBatch() was called by two tasks at once")
        self = .waiting(call: call, continuation)
    }

    /// The waiting call's continuation, to resume outside the lock; nil when none waits.
    mutating func resume() -> UnsafeContinuation<LiveWrite?, Never>? {
        guard case .waiting(_, let continuation) = self else { return nil }
        self = .idle
        return continuation
    }
}

/// The adapter's function that writes a pushed batch (``LiveConnection/writeWhenReady(_:)``).
typealias LivePushTarget = @Sendable (LiveWrite) -> Void

/// What a section of a connection's lock leaves to do once the lock is let go: the waiting write loop to
/// resume and what with, the timers to stop, and whether the hub must forget the connection. Outside
/// ``LiveConnection`` so that it is not generic: made in every section, it needs no type metadata
/// looked up.
struct LiveHandoff {
    /// The write loop to resume with ``write``.
    var waiter: UnsafeContinuation<LiveWrite?, Never>?
    /// What to hand the write loop (nil: nothing more will be written).
    var write: LiveWrite?
    /// The hello and expiry timers to stop.
    var timers: [Task<Void, Never>] = []
    /// The hub must forget the connection (true once, when it closed).
    var remove = false
}
