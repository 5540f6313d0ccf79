/// The parts of a hub that its connections, its writer and its tick share, behind one lock: the commands
/// waiting for the writer, the recent views, the encoded frames, and the open connections.
///
/// Only the hub's own code runs under the lock: the service's code, and the encoding of views, run
/// outside it (frames are made outside and stored after).
///
/// A view that does not encode (a NaN in it, an encoder that throws) never stops the hub: the frame that
/// needed it is ``LiveViewText/unavailable(_:)``, kept like any frame, and the connections that needed it
/// are closed with ``LiveCloseCode/serverError``; the next version whose view encodes is served as usual.
final class LiveHubShared<Service: LiveService>: Sendable {
    struct Work {
        var batch: [LiveSubmission<Service>]
        var target: Int
    }

    private struct PatchKey: Hashable {
        var from: Int
        var to: Int
    }

    private struct State {
        var inbox: [LiveSubmission<Service>] = []
        /// The newest log head heard of (a replica catches up to it).
        var target = 0
        var running = false
        var closed = false
        var settled: [CheckedContinuation<Void, Never>] = []
        /// The latest views, oldest first, at most `historyCapacity`.
        var history: [(version: Int, view: Service.View)] = []
        var patches: [PatchKey: LiveViewText] = [:]
        var patchOrder: [PatchKey] = []
        var snapshot: (version: Int, text: LiveViewText)?
        /// The open connections, held weakly: the adapter owns each, and one it lets go of without
        /// closing is forgotten here too.
        var connections: [ObjectIdentifier: WeakConnection] = [:]
    }

    struct WeakConnection {
        weak var connection: LiveConnection<Service>?
    }

    private let state: LiveLock<State>
    private let historyCapacity: Int
    /// How many patch frames are kept for reuse.
    static var patchCapacity: Int { 64 }
    /// Starts the writer's run loop (set once, by the hub, before any work arrives).
    private let start = LiveLock(WriterStart())

    // The closure sits in a struct field, never directly as the lock's state: a function kept as a generic
    // value is re-wrapped each time it is read and written back through the lock, and every wake would
    // then call through one more layer than the last (LiveHubSharedTests checks the depth stays flat).
    private struct WriterStart {
        var run: (@Sendable () -> Void)?
    }

    init(version: Int, view: Service.View, historyCapacity: Int) {
        self.historyCapacity = historyCapacity
        var initial = State()
        initial.history = [(version, view)]
        initial.target = version
        state = LiveLock(initial)
    }

    /// Sets what starts the writer's run loop.
    func setStart(_ body: @escaping @Sendable () -> Void) {
        start.withLock { $0.run = body }
    }

    // MARK: The writer's work

    /// Hands a command to the writer; false (and nothing done) once the hub is closed.
    func submit(_ submission: LiveSubmission<Service>) -> Bool {
        let startNow = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.inbox.append(submission)
            return wake(&state)
        }
        guard let startNow else { return false }
        if startNow { runWriter() }
        return true
    }

    /// Notes that the log reached `head` (a replica then reads up to it).
    func raiseTarget(to head: Int) {
        let startNow = state.withLock { state -> Bool in
            guard !state.closed, head > state.target else { return false }
            state.target = head
            return wake(&state)
        }
        if startNow { runWriter() }
    }

    /// Forgets a head the writer could not read up to (the next notice or refresh tries again).
    func forgetTarget(above position: Int) {
        state.withLock { $0.target = min($0.target, position) }
    }

    /// Marks the writer running if it is not; true when the caller must start it.
    private func wake(_ state: inout State) -> Bool {
        guard !state.running else { return false }
        state.running = true
        return true
    }

    private func runWriter() {
        start.withLock { $0.run }?()
    }

    /// The writer's next work: the waiting batch and the head to catch up to; nil (and the writer marked
    /// stopped, its waiters released) when there is none.
    func takeWork(position: Int) -> Work? {
        let (work, settled) = state.withLock { state -> (Work?, [CheckedContinuation<Void, Never>]) in
            guard state.inbox.isEmpty, state.target <= position else {
                defer { state.inbox = [] }
                return (Work(batch: state.inbox, target: state.target), [])
            }
            state.running = false
            defer { state.settled = [] }
            return (nil, state.settled)
        }
        for continuation in settled { continuation.resume() }
        return work
    }

    /// Waits until the writer has nothing left to do.
    func settle() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.running else { return true }
                state.settled.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Refuses commands from now on.
    func close() -> [LiveConnection<Service>] {
        state.withLock { state in
            state.closed = true
            return state.connections.values.compactMap { $0.connection }
        }
    }

    // MARK: Views and frames

    /// Keeps the view at `version`, the newest, dropping the oldest beyond the capacity.
    func publish(version: Int, view: Service.View) {
        state.withLock { state in
            state.history.append((version, view))
            if state.history.count > historyCapacity { state.history.removeFirst(state.history.count - historyCapacity) }
        }
    }

    /// The newest version and its view.
    var head: (version: Int, view: Service.View) {
        state.withLock { $0.history[$0.history.count - 1] }
    }

    /// The snapshot frame of the newest view, with its version (or why that view cannot be sent).
    func snapshotFrame(stream: String) -> (text: LiveViewText, version: Int) {
        let (head, cached) = state.withLock { state in (state.history[state.history.count - 1], state.snapshot) }
        if let cached, cached.version == head.version { return (cached.text, head.version) }
        // The view's `Encodable` is the app's code: it runs here, outside the lock.
        let text = Self.snapshot(of: head.view, version: head.version, stream: stream)
        state.withLock { state in
            if (state.snapshot?.version ?? Int.min) < head.version { state.snapshot = (head.version, text) }
        }
        return (text, head.version)
    }

    /// The frame that takes a client from version `from` to `to`: a patch when the view at `from` is
    /// still kept (and `to` too), else a snapshot of the newest view (with its version). Either may be
    /// ``LiveViewText/unavailable(_:)``: the view it needs does not encode.
    func syncFrame(from: Int, to: Int, stream: String) -> (text: LiveViewText, version: Int) {
        let key = PatchKey(from: from, to: to)
        let found = state.withLock { state -> (LiveViewText?, Service.View?, Service.View?) in
            if let text = state.patches[key] { return (text, nil, nil) }
            let old = state.history.last { $0.version == from }?.view
            let new = state.history.last { $0.version == to }?.view
            return (nil, old, new)
        }
        if let text = found.0 { return (text, to) }
        guard let old = found.1, let new = found.2 else { return snapshotFrame(stream: stream) }
        let text: LiveViewText
        do {
            text = .frame(ServerFrame.patch(from: from, version: to, changes: try LiveViewPatch(from: old, to: new)))
        } catch {
            text = .unavailable("the view at version \(to) cannot be sent: \(LiveJSON.describe(encoding: error))")
        }
        // A failure is kept like a patch: every client at `from` gets the same answer, and the view's
        // encoder is not run again for each of them.
        state.withLock { state in
            guard state.patches.updateValue(text, forKey: key) == nil else { return }
            state.patchOrder.append(key)
            if state.patchOrder.count > Self.patchCapacity { state.patches[state.patchOrder.removeFirst()] = nil }
        }
        return (text, to)
    }

    /// The snapshot frame of `view` at `version`, or why it cannot be sent: it does not encode, or it
    /// does not encode as a JSON object.
    static func snapshot(of view: Service.View, version: Int, stream: String) -> LiveViewText {
        let json: String
        do {
            json = try LiveJSON.text(of: view)
        } catch {
            return .unavailable("the view at version \(version) cannot be sent: \(LiveJSON.describe(encoding: error))")
        }
        guard json.utf8.first == UInt8(ascii: "{") else {
            return .unavailable("the view at version \(version) cannot be sent: it is not a JSON object")
        }
        return .frame(ServerFrame.snapshot(stream: stream, version: version, viewJSON: json))
    }

    // MARK: Connections

    /// Adds an open connection; false when the hub is closed.
    func add(_ connection: LiveConnection<Service>) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.connections[ObjectIdentifier(connection)] = WeakConnection(connection: connection)
            return true
        }
    }

    func remove(_ connection: LiveConnection<Service>) {
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// The open connections (forgetting those their adapters let go of).
    var connections: [LiveConnection<Service>] {
        state.withLock { state in
            let live = state.connections.values.compactMap { $0.connection }
            if live.count < state.connections.count { state.connections = state.connections.filter { $0.value.connection != nil } }
            return live
        }
    }
}

/// A snapshot or patch frame's text, or why the view it needed cannot be sent.
enum LiveViewText: Sendable, Equatable {
    /// The frame, ready to write.
    case frame(String)
    /// The view does not encode (or not as a JSON object): a message for the client, in the protocol's
    /// words, saying which version and where.
    case unavailable(String)
}
