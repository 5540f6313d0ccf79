import Foundation
import Synchronization

/// The parts of a hub that its connections, its writer and its tick share, behind one lock: the commands
/// waiting for the writer, the newest state, each audience's recent views and encoded frames, the open
/// connections, and the run loops waiting to tick.
///
/// Only the hub's own code runs under the lock: the service's code, and the encoding of views, run
/// outside it (frames are made outside and stored after).
///
/// Views are made lazily: an audience's view of a version is made the first time a connection of that
/// audience (or the server) needs it, once.
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
        /// The newest state the writer applied, with its version.
        var head: Head
        /// The recent views and frames of each audience that has an admitted connection (and of those
        /// the server read since the last version).
        var audiences: [Service.Audience: AudienceViews] = [:]
        /// The open connections, held weakly, with their audience once admitted: the adapter owns each,
        /// and one it lets go of without closing is forgotten here too.
        var connections: [ObjectIdentifier: Member] = [:]
        /// The run loops waiting for a client to fall behind (``LiveHub/run()``).
        var wakeups = LiveWakeups()
        /// The audiences with a number (those a connection was admitted to), by number.
        var audienceAt: [Int: Service.Audience] = [:]
        var nextAudienceIndex = 0
        /// Who is here, and what changed since the last tick.
        var presence = LivePresenceList()
    }

    /// The newest state and its version.
    struct Head {
        var version: Int
        var state: Service.State
    }

    /// One audience's recent views, oldest first, and the frames made from them.
    private struct AudienceViews {
        var history: [(version: Int, view: Service.View)] = []
        var patches: [PatchKey: LiveViewText] = [:]
        var patchOrder: [PatchKey] = []
        var snapshot: (version: Int, text: LiveViewText)?
        /// Admitted connections in the audience.
        var members = 0
        /// The audience's number (``admit(_:to:)``); -1 for one made only for the server's reads.
        var index = -1
    }

    struct Member {
        weak var connection: LiveConnection<Service>?
        var audience: Service.Audience?
    }

    private let state: LiveLock<State>
    private let service: Service
    private let historyCapacity: Int
    /// The newest version, readable without the lock (a connection that took its patch compares it with
    /// its own, on every frame written).
    private let headVersion: Atomic<Int>
    /// Whether a run loop must tick: set by ``wantTick()`` and cleared by the loop, so that a burst of
    /// changes takes the lock once.
    private let tickWanted = Atomic<Bool>(false)
    private let tickCount = Atomic<Int>(0)
    /// Whether the view type's members were checked against its ``LiveView/liveFields`` (done on the
    /// first view the hub makes).
    private let fieldsChecked = Atomic<Bool>(false)
    /// How many patch frames are kept for reuse, per audience.
    static var patchCapacity: Int { 64 }
    /// Starts the writer's run loop (set once, by the hub, before any work arrives).
    private let start = LiveLock(WriterStart())

    // The closure sits in a struct field, never directly as the lock's state: a function kept as a generic
    // value is re-wrapped each time it is read and written back through the lock, and every wake would
    // then call through one more layer than the last (LiveHubSharedTests checks the depth stays flat).
    private struct WriterStart {
        var run: (@Sendable () -> Void)?
        /// Told when the last connection closed (``LiveRooms``' idle watch).
        var onEmpty: (@Sendable () -> Void)?
    }

    init(service: Service, version: Int, state: Service.State, historyCapacity: Int, presenceLimit: Int = Int.max) {
        self.service = service
        self.historyCapacity = historyCapacity
        var initial = State(head: Head(version: version, state: state))
        initial.presence.limit = presenceLimit
        initial.target = version
        self.state = LiveLock(initial)
        headVersion = Atomic(version)
    }

    /// Sets what is called (outside every lock of the hub) each time the hub's last connection closes.
    func setOnEmpty(_ body: @escaping @Sendable () -> Void) {
        start.withLock { $0.onEmpty = body }
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

    /// Keeps `state` as the newest, at `version`, and wakes a run loop when a client may be behind.
    ///
    /// A service with one view for all (``LiveEveryone``) has its view made now, once per version, as
    /// every hub of a cluster does: a client that resumes on another node from any of the last
    /// ``LiveOptions/historyCapacity`` versions gets a patch. Other audiences' views are made when a
    /// client of theirs needs one (at most once per version); an audience nobody is in is forgotten once
    /// its newest view is that many versions old.
    func publish(version: Int, state newState: Service.State) {
        let head = Head(version: version, state: newState)
        let anyone = state.withLock { state -> Bool in
            state.head = head
            let oldest = version - historyCapacity
            func forgotten(_ views: AudienceViews) -> Bool { views.members == 0 && (views.history.last?.version ?? Int.min) < oldest }
            // Scanned on every publish, copied only when an audience is to go.
            if state.audiences.values.contains(where: forgotten) {
                for views in state.audiences.values where forgotten(views) && views.index >= 0 { state.audienceAt[views.index] = nil }
                state.audiences = state.audiences.filter { !forgotten($0.value) }
            }
            return !state.connections.isEmpty
        }
        headVersion.store(version, ordering: .releasing)
        if let everyone = LiveEveryone.everyone as? Service.Audience { _ = view(for: everyone, at: head) }
        if anyone { wantTick() }
    }

    /// The newest version and state.
    var head: Head {
        state.withLock { $0.head }
    }

    /// The newest version.
    var version: Int {
        headVersion.load(ordering: .acquiring)
    }

    /// `audience`'s view of `head` (which the caller read from ``head``): the one made before, or made
    /// now (the service's code runs outside the lock) and kept.
    func view(for audience: Service.Audience, at head: Head) -> Service.View {
        let kept = state.withLock { state -> Service.View? in
            guard let last = state.audiences[audience]?.history.last, last.version >= head.version else { return nil }
            return state.audiences[audience]?.history.last { $0.version == head.version }?.view
        }
        if let kept { return kept }
        var view = service.view(of: head.state, for: audience)
        if !fieldsChecked.exchange(true, ordering: .relaxed) {
            // The type's fields are the same for every audience: checked once. A view that does not
            // encode is left to the frames (view_unavailable).
            _ = try? view.checkLiveFields()
        }
        state.withLock { state in
            var views = state.audiences[audience] ?? AudienceViews()
            if let last = views.history.last {
                guard last.version < head.version else { return }
                // An equal view shares the storage of the one before.
                if last.view == view { view = last.view }
            }
            views.history.append((head.version, view))
            if views.history.count > historyCapacity { views.history.removeFirst(views.history.count - historyCapacity) }
            state.audiences[audience] = views
        }
        return view
    }

    /// The snapshot frame of `audience`'s view of the newest state, with its version (or why that view
    /// cannot be sent).
    func snapshotFrame(for audience: Service.Audience, stream: String) -> (text: LiveViewText, version: Int) {
        let (head, cached) = state.withLock { state in (state.head, state.audiences[audience]?.snapshot) }
        if let cached, cached.version == head.version { return (cached.text, head.version) }
        // The view and its `Encodable` are the app's code: they run here, outside the lock.
        let text = Self.snapshot(of: view(for: audience, at: head), version: head.version, stream: stream)
        state.withLock { state in
            guard state.audiences[audience] != nil, (state.audiences[audience]?.snapshot?.version ?? Int.min) < head.version else { return }
            state.audiences[audience]?.snapshot = (head.version, text)
        }
        return (text, head.version)
    }

    /// The frame that takes a client of `audience` from version `from` to `head`: a patch when the
    /// audience's view at `from` is still kept, else a snapshot of the newest view (with its version).
    /// Either may be ``LiveViewText/unavailable(_:)``: the view it needs does not encode.
    func syncFrame(for audience: Service.Audience, from: Int, to head: Head, stream: String) -> (text: LiveViewText, version: Int) {
        let key = PatchKey(from: from, to: head.version)
        let found = state.withLock { state -> (LiveViewText?, Service.View?) in
            guard let views = state.audiences[audience] else { return (nil, nil) }
            if let text = views.patches[key] { return (text, nil) }
            return (nil, views.history.last { $0.version == from }?.view)
        }
        if let text = found.0 { return (text, head.version) }
        guard let old = found.1 else { return snapshotFrame(for: audience, stream: stream) }
        let new = view(for: audience, at: head)
        let text: LiveViewText
        do {
            text = .frame(LiveFrame(ServerFrame.patch(from: from, version: head.version, changes: try LiveViewPatch(from: old, to: new))))
        } catch {
            text = .unavailable("the view at version \(head.version) cannot be sent: \(LiveJSON.describe(encoding: error))")
        }
        // A failure is kept like a patch: every client at `from` gets the same answer, and the view's
        // encoder is not run again for each of them.
        state.withLock { state in
            guard var views = state.audiences[audience] else { return }
            guard views.patches.updateValue(text, forKey: key) == nil else { return }
            views.patchOrder.append(key)
            if views.patchOrder.count > Self.patchCapacity { views.patches[views.patchOrder.removeFirst()] = nil }
            state.audiences[audience] = views
        }
        return (text, head.version)
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
        return .frame(LiveFrame(ServerFrame.snapshot(stream: stream, version: version, viewJSON: json)))
    }

    // MARK: Connections

    /// Adds an open connection; false when the hub is closed.
    func add(_ connection: LiveConnection<Service>) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.connections[ObjectIdentifier(connection)] = Member(connection: connection)
            return true
        }
    }

    /// Places an admitted connection in `audience` (moving it from the one it was in), and gives the
    /// connection the audience's number, by which the tick groups connections without hashing audiences.
    func admit(_ connection: LiveConnection<Service>, to audience: Service.Audience) {
        state.withLock { state in
            let id = ObjectIdentifier(connection)
            guard var member = state.connections[id] else { return }
            if let old = member.audience { state.audiences[old]?.members -= 1 }
            member.audience = audience
            state.connections[id] = member
            var views = state.audiences[audience] ?? AudienceViews()
            if views.index < 0 {
                // Numbered on its first connection (an audience the server only read has none yet).
                views.index = state.nextAudienceIndex
                state.nextAudienceIndex += 1
                state.audienceAt[views.index] = audience
            }
            views.members += 1
            state.audiences[audience] = views
            connection.audienceIndex.store(views.index, ordering: .releasing)
        }
        wantTick()
    }

    /// The audience numbered `index` (see ``admit(_:to:)``), while it has views kept.
    func audience(at index: Int) -> Service.Audience? {
        state.withLock { $0.audienceAt[index] }
    }

    func remove(_ connection: LiveConnection<Service>) {
        let emptied = state.withLock { state -> Bool in
            guard let member = state.connections.removeValue(forKey: ObjectIdentifier(connection)) else { return false }
            if let audience = member.audience { state.audiences[audience]?.members -= 1 }
            return state.connections.isEmpty
        }
        if emptied { start.withLock { $0.onEmpty }?() }
    }

    /// The open connections (forgetting those their adapters let go of).
    var connections: [LiveConnection<Service>] {
        let (live, emptied) = state.withLock { state -> ([LiveConnection<Service>], Bool) in
            var live: [LiveConnection<Service>] = []
            live.reserveCapacity(state.connections.count)
            var gone: [ObjectIdentifier] = []
            for (id, member) in state.connections {
                if let connection = member.connection {
                    live.append(connection)
                } else {
                    gone.append(id)
                }
            }
            for id in gone {
                if let audience = state.connections.removeValue(forKey: id)?.audience { state.audiences[audience]?.members -= 1 }
            }
            return (live, !gone.isEmpty && state.connections.isEmpty)
        }
        if emptied { start.withLock { $0.onEmpty }?() }
        return live
    }

    // MARK: Presence

    /// Whether the service shows presence (its ``LiveService/Presence`` is not `Never`).
    static var showsPresence: Bool { Service.Presence.self != Never.self }

    /// Adds `client`'s entry (its JSON text) to the list; returns the whole list's frame, for the client
    /// that joined.
    func join(_ client: LiveClientID, entry: String) -> String {
        let whole = state.withLock { state in
            state.presence.join(client.text, entry: entry)
            return ServerFrame.presence(state: state.presence.entries)
        }
        wantTick()
        return whole
    }

    /// Takes `client`'s connection out of the list (the entry leaves once its last connection did).
    func leave(_ client: LiveClientID) {
        let changed = state.withLock { $0.presence.leave(client.text) }
        if changed { wantTick() }
    }

    /// This server's own clients in the presence list: each one's entry as JSON text, by client id.
    var localPresence: [String: String] {
        state.withLock { $0.presence.localEntries }
    }

    /// Shows what `node` says is present until `expires`, in place of what it said before.
    func mergePresence(_ entries: [String: String], from node: String, expires: Date) {
        state.withLock { $0.presence.merge(entries, from: node, expires: expires) }
        wantTick()
    }

    /// Forgets what `node` said.
    func forgetPresence(from node: String) {
        if state.withLock({ $0.presence.forget(node) }) { wantTick() }
    }

    /// Forgets what every node said whose word expired at `now`.
    func expirePresence(now: Date) {
        if state.withLock({ $0.presence.expire(now: now) }) { wantTick() }
    }

    /// The frames of what changed in the list since the last call (`changes`, and the whole list after
    /// them), made once for every client, or nil when nothing did.
    func takePresenceChanges() -> (changes: LiveFrame, whole: LiveFrame)? {
        state.withLock { state in
            guard let (joins, leaves) = state.presence.takeChanges() else { return nil }
            return (LiveFrame(ServerFrame.presence(joins: joins, leaves: leaves)), LiveFrame(ServerFrame.presence(state: state.presence.entries)))
        }
    }

    // MARK: Waking the tick

    /// A client may be behind the newest version: wakes a run loop (``LiveHub/run()``), or leaves word
    /// for the next one that waits. Cheap when word was left already.
    func wantTick() {
        guard !tickWanted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let waiting = state.withLock { $0.wakeups.wake() }
        for continuation in waiting { continuation.resume(returning: true) }
    }

    /// A connection took its last sync frame at `version`: when that is not the newest, it needs another.
    func synced(at version: Int) {
        if version != headVersion.load(ordering: .acquiring) { wantTick() }
    }

    /// A tick begins: it serves every change made so far, so the word left for it is taken.
    func tickStarts() {
        tickWanted.store(false, ordering: .releasing)
        tickCount.add(1, ordering: .relaxed)
    }

    /// How many ticks began (for tests of the idle hub).
    var ticks: Int { tickCount.load(ordering: .relaxed) }

    /// Waits until a client may be behind (at once when word was left since the last tick began), for a
    /// run loop. False when the calling task is cancelled.
    func waitForTick() async -> Bool {
        let call = LiveWakeups.nextCall()
        let woken = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                if tickWanted.load(ordering: .acquiring) {
                    continuation.resume(returning: true)
                    return
                }
                if state.withLock({ $0.wakeups.wait(call: call, continuation) }) {
                    continuation.resume(returning: false)   // cancelled before it could wait
                } else if tickWanted.load(ordering: .acquiring) {
                    // Word left between the first look and the wait woke nobody: wake now.
                    for waiting in state.withLock({ $0.wakeups.wake() }) { waiting.resume(returning: true) }
                }
            }
        } onCancel: {
            state.withLock { $0.wakeups.cancel(call: call) }?.resume(returning: false)
        }
        // A cancellation that came after the wake is not kept for a call that will never look for it.
        state.withLock { $0.wakeups.forget(call: call) }
        return woken && !Task.isCancelled
    }
}

/// Who is connected to a hub, with each client's entry as JSON text: the clients connected here, and
/// those other servers of a cluster said are connected to them (until their word expires); and what the
/// clients were last told, so that each tick sends the difference. A client connected twice (a reconnect
/// overlapping its old connection, or one connection here and one on another server) is one entry, which
/// leaves with its last connection.
struct LivePresenceList {
    /// The most entries listed (``LiveOptions/presenceLimit``).
    var limit = Int.max
    private var local: [String: (entry: String, connections: Int)] = [:]
    /// This server's clients beyond the limit: counted (so that their leaving changes nothing), not listed.
    private var unlisted: [String: Int] = [:]
    private var remote: [String: (entries: [String: String], expires: Date)] = [:]
    /// The list as the clients were last told it (``takeChanges()``).
    private var told: [String: String] = [:]
    private var changed = false

    /// The whole list (this server's entry first when a client is also on another), sorted by client id.
    var entries: [(client: String, json: String)] {
        combined.map { ($0.key, $0.value) }.sorted { $0.client < $1.client }
    }

    /// This server's own clients, by client id.
    var localEntries: [String: String] {
        local.mapValues(\.entry)
    }

    private var combined: [String: String] {
        var all: [String: String] = [:]
        for (_, said) in remote { all.merge(said.entries) { first, _ in first } }
        for (client, here) in local { all[client] = here.entry }
        return all
    }

    mutating func join(_ client: String, entry: String) {
        if local[client] == nil, unlisted[client] != nil || local.count >= limit {
            unlisted[client, default: 0] += 1
            return
        }
        local[client] = (entry, (local[client]?.connections ?? 0) + 1)
        changed = true
    }

    /// True when this server's entry left (its last connection here closed).
    mutating func leave(_ client: String) -> Bool {
        if let count = unlisted[client] {
            unlisted[client] = count > 1 ? count - 1 : nil
            return false
        }
        guard let found = local[client] else { return false }
        guard found.connections <= 1 else {
            local[client]?.connections -= 1
            return false
        }
        local[client] = nil
        changed = true
        return true
    }

    /// Replaces what `node` said, until `expires`.
    mutating func merge(_ entries: [String: String], from node: String, expires: Date) {
        remote[node] = (entries, expires)
        changed = true
    }

    /// Forgets what `node` said; true when it had said something.
    mutating func forget(_ node: String) -> Bool {
        guard remote.removeValue(forKey: node) != nil else { return false }
        changed = true
        return true
    }

    /// Forgets what every node said whose word expired at `now`; true when one had.
    mutating func expire(now: Date) -> Bool {
        let before = remote.count
        remote = remote.filter { $0.value.expires > now }
        guard remote.count < before else { return false }
        changed = true
        return true
    }

    /// What joined (or changed) and left since the clients were last told, each sorted by client id; nil
    /// when nothing did.
    mutating func takeChanges() -> (joins: [(client: String, json: String)], leaves: [String])? {
        guard changed else { return nil }
        changed = false
        let now = combined
        let joins: [(client: String, json: String)] = now.filter { told[$0.key] != $0.value }.map { (client: $0.key, json: $0.value) }
            .sorted { $0.client < $1.client }
        let leaves = told.keys.filter { now[$0] == nil }.sorted()
        told = now
        guard !joins.isEmpty || !leaves.isEmpty else { return nil }
        return (joins, leaves)
    }
}

/// The run loops of a hub waiting for a client to fall behind: each call is numbered, so that a
/// cancellation that comes before its call waits is found by that call.
struct LiveWakeups {
    private var waiting: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    private var cancelledEarly: Set<UInt64> = []
    private static let calls = Atomic<UInt64>(0)

    /// A number for a new call.
    static func nextCall() -> UInt64 {
        calls.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Call `call` waits with `continuation`; true (and nothing kept) when it was cancelled before.
    mutating func wait(call: UInt64, _ continuation: CheckedContinuation<Bool, Never>) -> Bool {
        if cancelledEarly.remove(call) != nil { return true }
        waiting[call] = continuation
        return false
    }

    /// Call `call` was cancelled: its continuation when it waits, else the cancellation is kept.
    mutating func cancel(call: UInt64) -> CheckedContinuation<Bool, Never>? {
        if let continuation = waiting.removeValue(forKey: call) { return continuation }
        cancelledEarly.insert(call)
        return nil
    }

    /// Forgets a cancellation kept for `call`, once the call returned.
    mutating func forget(call: UInt64) {
        cancelledEarly.remove(call)
    }

    /// Every waiting call's continuation, to resume outside the lock.
    mutating func wake() -> [CheckedContinuation<Bool, Never>] {
        defer { waiting = [:] }
        return Array(waiting.values)
    }
}

/// A snapshot or patch frame, or why the view it needed cannot be sent.
enum LiveViewText: Sendable, Equatable {
    /// The frame, ready to write: made once, and shared by every client it is handed to.
    case frame(LiveFrame)
    /// The view does not encode (or not as a JSON object): a message for the client, in the protocol's
    /// words, saying which version and where.
    case unavailable(String)
}
