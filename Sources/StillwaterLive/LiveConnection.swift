import Synchronization

/// One client's connection to a ``LiveHub``: what an adapter feeds the client's frames to and takes the
/// frames to write from.
///
/// An adapter (a WebSocket server, a test) does three things and nothing else:
///
/// 1. each text frame the client sends goes to ``receive(_:)``, each binary frame to ``receiveBinary()``;
/// 2. a loop writes what ``nextWrite()`` returns — frames in order, then the close with its code —
///    awaiting each write before asking for more, until it returns nil;
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
        /// The adapter's write loop, waiting for something to write.
        var waiter: CheckedContinuation<Session.Write?, Never>?
        var timer: Task<Void, Never>?
        var removed = false

        /// What follows from the session's phase: the hello timer to stop once the client is past the
        /// hello (taken once), and whether the hub must now forget the connection (true once, when closed).
        mutating func takeFinished() -> (remove: Bool, timer: Task<Void, Never>?) {
            let phase = session.phase
            var stopped: Task<Void, Never>?
            if phase != .awaitingHello && phase != .authenticating {
                stopped = timer
                timer = nil
            }
            guard phase == .closed, !removed else { return (false, stopped) }
            removed = true
            return (true, stopped)
        }
    }

    private let hub: LiveHub<Service>
    private let driver: LiveLock<Driver>
    /// The session's ``LiveSession/wantsSync(head:)`` base (its version, while a patch may be sent), or
    /// `Int.min` for none: stored at the end of every section of the lock that may change the session,
    /// read by the hub's tick without the lock (``sync(_:from:to:)`` checks again under it), so a tick
    /// takes no lock for a connection that wants nothing.
    private let syncBase = Atomic<Int>(Int.min)

    init(hub: LiveHub<Service>, transport: [String: String]) {
        self.hub = hub
        driver = LiveLock(Driver(session: Session(limits: hub.options.limits, transport: transport)))
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

    /// Where the connection's session is in its life.
    public var phase: LiveSession<Service.Command, Service.Identity>.Phase {
        driver.withLock { $0.session.phase }
    }

    /// Whether ``nextWrite()`` would return at once (frames are waiting, or the close).
    public var hasWrite: Bool {
        driver.withLock { $0.session.hasWrite }
    }

    /// How many frames wait to be written: never more than ``LiveLimits/maxQueuedFrames``.
    public var queuedFrames: Int {
        driver.withLock { $0.session.queuedFrames }
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
        update { $0.transportClosed() }
    }

    /// Waits for what to write next: frames (write them in order, and wait for the writes before asking
    /// again) or the close (send it with its code and reason, then stop). Nil once the connection is
    /// closed; also nil when the calling task is cancelled.
    public func nextWrite() async -> LiveSession<Service.Command, Service.Identity>.Write? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Session.Write?, Never>) in
                let (ready, finished) = driver.withLock { driver -> (Session.Write??, (remove: Bool, timer: Task<Void, Never>?)) in
                    if let write = driver.session.takeWrite() { return (.some(write), endSection(&driver)) }
                    if driver.session.phase == .closed { return (.some(nil), endSection(&driver)) }
                    precondition(driver.waiter == nil, "LiveConnection.nextWrite() was called by two tasks at once")
                    driver.waiter = continuation
                    return (nil, (false, nil))
                }
                if let ready {
                    continuation.resume(returning: ready)
                    finish(finished)
                }
            }
        } onCancel: {
            let waiter = driver.withLock { driver in
                defer { driver.waiter = nil }
                return driver.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    // MARK: The hub's side

    func wantsSync(head: Int) -> Int? {
        let base = syncBase.load(ordering: .acquiring)
        return base == Int.min || base == head ? nil : base
    }

    func sync(_ frame: String, from: Int, to: Int) {
        update { $0.sync(frame, from: from, to: to) }
    }

    func shutDown() {
        update { $0.shutDown() }
    }

    // MARK: Running the session

    /// Runs `body` on the session under the lock, then hands a waiting writer what there is to write.
    /// One section of the lock per call: it runs once or more per frame.
    @discardableResult
    private func update<R>(_ body: (inout Session) -> R) -> R {
        let (result, waiter, write, finished) = driver.withLock {
            driver -> (R, CheckedContinuation<Session.Write?, Never>?, Session.Write??, (remove: Bool, timer: Task<Void, Never>?)) in
            let result = body(&driver.session)
            guard let waiter = driver.waiter else { return (result, nil, nil, endSection(&driver)) }
            if let write = driver.session.takeWrite() {
                driver.waiter = nil
                return (result, waiter, .some(write), endSection(&driver))
            }
            if driver.session.phase == .closed {
                driver.waiter = nil
                return (result, waiter, .some(nil), endSection(&driver))
            }
            return (result, nil, nil, endSection(&driver))
        }
        if let waiter, let write {
            waiter.resume(returning: write)
        }
        finish(finished)
        return result
    }

    /// Ends a section of the lock that may have changed the session: stores its sync base for the tick,
    /// and takes what ``Driver/takeFinished()`` says is to be done outside the lock.
    private func endSection(_ driver: inout Driver) -> (remove: Bool, timer: Task<Void, Never>?) {
        syncBase.store(driver.session.syncBase ?? Int.min, ordering: .releasing)
        return driver.takeFinished()
    }

    /// Stops the hello timer and forgets the connection in the hub, as ``Driver/takeFinished()`` said.
    private func finish(_ finished: (remove: Bool, timer: Task<Void, Never>?)) {
        finished.timer?.cancel()
        if finished.remove { hub.shared.remove(self) }
    }

    /// Runs `body` on the session and does the work it asks for. Commands are submitted to the hub
    /// under the connection's lock, so they reach it in the order the session released them (the hub
    /// never takes a connection's lock while holding its own); credentials are checked in a task of
    /// their own.
    private func run(_ body: (inout Session) -> [Session.Effect]) {
        let checks = update { session -> [(LiveHandshake, LiveResume?)] in
            var checks: [(LiveHandshake, LiveResume?)] = []
            for effect in body(&session) {
                switch effect {
                case .authenticate(let handshake, let resume):
                    checks.append((handshake, resume))
                case .submit(let request, let identity):
                    let submission = LiveSubmission<Service>(
                        command: request.command, cid: request.cid, client: request.client, seq: request.seq, identity: identity
                    ) {
                        [weak self] outcome in self?.update { $0.answered(request, with: outcome) }
                    }
                    if !hub.shared.submit(submission) {
                        session.answered(request, with: .unavailable(LiveHub<Service>.closedMessage))
                    }
                }
            }
            return checks
        }
        for (handshake, resume) in checks {
            Task { await self.authenticate(handshake, resume: resume) }
        }
    }

    private func authenticate(_ handshake: LiveHandshake, resume: LiveResume?) async {
        switch await hub.service.authenticate(handshake) {
        case .accepted(let identity):
            let frame: (text: String, version: Int)
            let head = hub.version
            if let resume, resume.stream == hub.stream {
                frame = hub.shared.syncFrame(from: resume.version, to: head, stream: hub.stream)
            } else {
                frame = hub.shared.snapshotFrame(stream: hub.stream)
            }
            let client = hub.newClient()
            run { $0.authenticated(as: identity, client: client, stream: hub.stream, sync: frame.text, version: frame.version) }
        case .refused(let message):
            update { $0.refused(message) }
        }
    }
}
