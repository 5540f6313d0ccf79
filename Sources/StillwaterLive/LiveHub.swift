import Foundation
import Stillwater

/// A store served live: its state kept in a log, its view sent to every connected client as a snapshot
/// and then patches, and the clients' commands recorded and applied once.
///
/// A hub holds what its connections share: the store, the log's writer, the latest views (so a client
/// that reconnects gets a patch from the version it has), the encoded frames (clients in step share
/// them), and the tick that sends each client one patch per interval. An adapter makes a
/// ``LiveConnection`` per socket with ``connect(transport:)`` and moves bytes; everything the protocol
/// says happens here, without sockets.
///
/// - **Acknowledged means durable.** A command is decided against the state, recorded with the log's
///   `append`, and only once `append` returned applied, shown, and acknowledged. Commands that arrive
///   while an append runs go into the next one, together.
/// - **Applied at most once, however late the retry.** A client numbers its commands (1, 2, 3, …) under
///   the id its welcome gave it (``LiveClientID``); the log keeps, per client, the highest number it
///   recorded and that command's version, in its entries and snapshots. So a command retried after a
///   reconnect, a restart or a million other commands is answered as a duplicate, on every node. A
///   client unseen for ``LiveOptions/clientRetention`` is forgotten, and its late retries are refused
///   (`client_expired`), never applied. A command with only a `cid` is recognised among the latest
///   ``RecentCommandIDs/capacity`` such commands.
/// - **A cluster is a set of replicas of one log, with one decision per command.** Each hub applies the
///   log's records in order; it records a batch only if the log is still at the version its decisions
///   saw (`ActionLog.append(_:ifHeadIs:)`), else it reads the newer records and decides again, so
///   `applied` means decided on the state it was applied to. ``advance(to:)`` or ``refresh()`` tell it
///   of others' records.
///
/// ```swift
/// import StillwaterLive
///
/// struct Tally: Codable, Sendable { var votes: [String] = [] }
/// struct Vote: Action, Codable, Sendable {
///     var choice: String
///     func reduce(_ state: inout Tally) { state.votes.append(choice) }
/// }
/// struct TallyView: LiveView {
///     var total: Int
///     static let liveFields: [LiveField<TallyView>] = [.value("total", \.total)]
/// }
/// struct Poll: LiveService {
///     func view(of state: Tally) -> TallyView { TallyView(total: state.votes.count) }
///     func decide(_ command: String, state: Tally, identity: String) -> LiveDecision<Vote> {
///         .accept(Vote(choice: command))
///     }
///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("guest") }
/// }
/// let log = MemoryJournal<LiveLogState<Tally>, LiveEntry<Vote>>()
/// let hub = try await LiveHub.open(Poll(), log: log, initial: Tally())
/// let connection = hub.connect()
/// connection.receive(#"{"type":"hello","protocol":1}"#)
/// _ = await connection.nextBatch()                       // the welcome and the snapshot
/// connection.receive(#"{"type":"command","ref":1,"command":"yes"}"#)
/// if case .frames(let frames)? = await connection.nextBatch() { print(frames[0]) }
/// hub.tick()                                             // run() does this every patch interval
/// if case .frames(let frames)? = await connection.nextBatch() { print(frames[0]) }
/// // Prints "{\"type\":\"ack\",\"ref\":1,\"version\":1}",
/// //        "{\"type\":\"patch\",\"from\":0,\"version\":1,\"set\":{\"total\":1}}"
/// ```
public final class LiveHub<Service: LiveService>: Sendable {
    /// The log a hub keeps its state in: any `ActionLog` of ``LiveLogState`` snapshots and ``LiveEntry``
    /// records (`FileJournal` and `MemoryJournal` are ones).
    public typealias Log = any ActionLog<LiveLogState<Service.State>, LiveEntry<Service.LiveAction>>

    /// The service: the view, the commands, the check of credentials.
    public let service: Service
    /// The state: every record the hub applied, in log order, as a read-only property. Observe it, scope
    /// it, derive from it freely; it changes only through the hub's log (``perform(_:cid:as:)``, clients'
    /// commands, other nodes' records).
    ///
    /// - Complexity: Reading ``state`` allocates nothing; each observer is told once per applied batch.
    public var state: Property<Service.State> { store.state }
    /// The store holding the state; only the hub's worker dispatches to it.
    let store: Store<Service.State>
    /// The stream's identity (``LiveLogState/stream``), sent in every welcome and snapshot.
    public let stream: String
    /// The hub's options.
    public let options: LiveOptions

    let shared: LiveHubShared<Service>
    private let worker: LiveWorker<Service>
    /// The way to ``LiveOptions/observer``; nil when nobody observes.
    let reporter: LiveReporter?

    /// Opens the log and makes a hub of it: the newest snapshot and every record after it, reduced
    /// without effects. A log that holds nothing yet is given `initial` as its first snapshot (version
    /// 0), with a new stream identity; when several processes open a new shared log at once, each hub
    /// ends with the one first snapshot the log kept, so all have the same stream identity.
    ///
    /// - Parameters:
    ///   - service: The app's part.
    ///   - log: Where the state is kept. The hub is its only user in this process.
    ///   - initial: The state of a new log.
    ///   - options: Intervals and bounds.
    ///   - warn: Called with each warning the log gave when opened (a torn tail cut, say).
    /// - Throws: What the log throws when it cannot be read or written, or ``LiveHubError`` when its
    ///   records do not follow on from its snapshot or the view does not encode as a JSON object. A view
    ///   that does not encode in this state (a NaN in it) opens: each connection is answered
    ///   `view_unavailable` and closed with 1011 until a view encodes.
    /// - Precondition: Every member of the encoded view is one of ``LiveView/liveFields``.
    public static func open(
        _ service: Service, log: Log, initial: @autoclosure () -> Service.State, options: LiveOptions = LiveOptions(),
        warn: (String) -> Void = { _ in }
    ) async throws -> LiveHub {
        precondition(options.clientRetention >= .seconds(1),
                     "LiveOptions.clientRetention must be at least one second (got \(options.clientRetention))")
        let contents = try await log.open()
        contents.warnings.forEach(warn)
        guard contents.snapshot == nil else {
            return try LiveHub(service: service, log: log, durable: try replay(contents, initial: initial(), options: options), replayed: contents.records.count,
                           options: options)
        }
        // The stream's identity must survive a restart from the first record on. Processes that open a
        // new shared log at once each store a first snapshot and the log keeps one: read back the one
        // kept, so every replica has the same stream.
        let first = try replay(contents, initial: initial(), options: options)
        try await log.writeSnapshot(first, version: first.version)
        let stored = try await log.open()
        guard stored.snapshot != nil else { throw LiveHubError("the log kept no snapshot of version \(first.version)") }
        return try LiveHub(service: service, log: log, durable: try replay(stored, initial: initial(), options: options), replayed: stored.records.count,
                       options: options)
    }

    /// The log state `contents` holds: its snapshot (or `initial` with a new stream) and every record after it.
    private static func replay(
        _ contents: ActionLogContents<LiveLogState<Service.State>, LiveEntry<Service.LiveAction>>, initial: @autoclosure () -> Service.State,
        options: LiveOptions
    ) throws -> LiveLogState<Service.State> {
        var durable: LiveLogState<Service.State>
        if let snapshot = contents.snapshot {
            durable = snapshot.state
            durable.version = snapshot.version
        } else {
            durable = LiveLogState(state: initial(), clients: LiveClientTable(retention: options.clientRetention))
        }
        for record in contents.records {
            guard record.version == durable.version + 1 else {
                throw LiveHubError("the log's record \(record.version) does not follow version \(durable.version)")
            }
            record.entry.reduce(&durable)
        }
        return durable
    }

    private init(service: Service, log: Log, durable: LiveLogState<Service.State>, replayed: Int, options: LiveOptions) throws(LiveHubError) {
        self.service = service
        self.options = options
        reporter = LiveReporter.forHub(options)
        stream = durable.stream
        store = Store(durable.state)
        shared = LiveHubShared(service: service, version: durable.version, state: durable.state, historyCapacity: options.historyCapacity,
                               presenceLimit: options.presenceLimit)
        if let everyone = LiveEveryone.everyone as? Service.Audience {
            // One view for all: its type is checked now, so that a view that can never be sent stops the open.
            try shared.view(for: everyone, at: shared.head).checkLiveFields()
        }
        let worker = LiveWorker(service: service, log: log, store: store, shared: shared, options: options,
                                durable: durable, replayed: replayed, reporter: reporter)
        self.worker = worker
        shared.setStart { [weak worker] in
            guard let worker else { return }
            Task { await worker.run() }
        }
    }

    /// The observer this hub reports to: its ``LiveOptions/observer``, or its ``LiveRooms``' when its
    /// options name none; nil when nobody observes. A component that works for the hub (a cluster's
    /// presence exchange) reports its own failures here.
    public var observer: (any LiveObserver)? { reporter?.observer }

    /// The room name this hub's events carry: ``LiveOptions/observedRoom``, else the name its
    /// ``LiveRooms`` gave it; nil when it has none, or while nobody observes.
    public var observedRoom: String? { reporter?.room }

    /// The version of the newest view: the log version of the last record applied.
    public var version: Int { shared.version }

    /// The view of the newest state that the clients in `audience` are shown.
    ///
    /// - Complexity: The view is made once per version and audience (by ``LiveService/view(of:for:)``)
    ///   and kept while a client of the audience is connected, or until the next version.
    public func view(for audience: Service.Audience) -> Service.View {
        shared.view(for: audience, at: shared.head)
    }

    /// A new connection, waiting for its client's hello. The adapter feeds it what the client sends and
    /// writes what ``LiveConnection/nextBatch()`` returns.
    ///
    /// - Parameter transport: What the adapter saw of the connection (an `authorization` header, an
    ///   `origin`, an `address`), handed to ``LiveService/authenticate(_:)`` in the handshake.
    public func connect(transport: [String: String] = [:]) -> LiveConnection<Service> {
        LiveConnection(hub: self, transport: transport)
    }

    /// Submits a command from the server itself (not a client) and waits for its outcome.
    ///
    /// The same path as a client's command: decided, recorded, applied once (a `cid` seen before is a
    /// duplicate), answered once durable.
    public func perform(_ command: Service.Command, cid: String? = nil, as identity: Service.Identity) async -> LiveOutcome {
        await withCheckedContinuation { continuation in
            submit(command, cid: cid, as: identity) { continuation.resume(returning: $0) }
        }
    }

    /// Submits command number `seq` of `client` and waits for its outcome: the server's own way to send
    /// commands that are applied at most once however often they are retried.
    ///
    /// ```swift
    /// import StillwaterLive
    ///
    /// struct Total: Codable, Sendable { var sum = 0 }
    /// struct Add: Action, Codable, Sendable {
    ///     var amount: Int
    ///     func reduce(_ state: inout Total) { state.sum += amount }
    /// }
    /// struct TotalView: LiveView {
    ///     var sum: Int
    ///     static let liveFields: [LiveField<TotalView>] = [.value("sum", \.sum)]
    /// }
    /// struct Adder: LiveService {
    ///     func view(of state: Total) -> TotalView { TotalView(sum: state.sum) }
    ///     func decide(_ command: Int, state: Total, identity: String) -> LiveDecision<Add> { .accept(Add(amount: command)) }
    ///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("server") }
    /// }
    /// let hub = try await LiveHub.open(Adder(), log: MemoryJournal<LiveLogState<Total>, LiveEntry<Add>>(), initial: Total())
    /// let client = hub.newClient()
    /// print(await hub.perform(5, client: client, seq: 1, as: "server"))
    /// print(await hub.perform(5, client: client, seq: 1, as: "server"), await hub.perform(5, client: client, seq: 3, as: "server"))
    /// print(hub.view.sum)
    /// // Prints "applied(version: 1)",
    /// //        "duplicate(version: 1) outOfOrder(expected: 2)",
    /// //        "5"
    /// ```
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - client: The client that numbers it (``newClient()`` gives one).
    ///   - seq: Its number: 1 for the client's first command, then one more each time.
    ///   - identity: Who sends it, for ``LiveService/decide(_:state:identity:)``.
    /// - Precondition: `seq` is at least 1.
    public func perform(_ command: Service.Command, client: LiveClientID, seq: Int, as identity: Service.Identity) async -> LiveOutcome {
        await withCheckedContinuation { continuation in
            submit(command, client: client, seq: seq, as: identity) { continuation.resume(returning: $0) }
        }
    }

    /// Submits a command and returns at once; `reply` is called once with its outcome, never on the
    /// calling thread before this returns. Commands are decided and answered in the order submitted.
    public func submit(
        _ command: Service.Command, cid: String? = nil, as identity: Service.Identity,
        reply: @escaping @Sendable (LiveOutcome) -> Void
    ) {
        submit(LiveSubmission<Service>(command: command, cid: cid, identity: identity, origin: reporter?.serverCommand(), reply: reply))
    }

    /// Submits command number `seq` of `client` and returns at once; `reply` is called once with its
    /// outcome, never on the calling thread before this returns. Commands are decided and answered in
    /// the order submitted.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - client: The client that numbers it.
    ///   - seq: Its number, at least 1.
    ///   - identity: Who sends it.
    ///   - reply: Called once with the outcome.
    public func submit(
        _ command: Service.Command, client: LiveClientID, seq: Int, as identity: Service.Identity,
        reply: @escaping @Sendable (LiveOutcome) -> Void
    ) {
        precondition(seq >= 1, "LiveHub.submit(_:client:seq:as:reply:): seq must be at least 1; got \(seq)")
        submit(LiveSubmission<Service>(command: command, client: client, seq: seq, identity: identity, origin: reporter?.serverCommand(),
                                       reply: reply))
    }

    private func submit(_ submission: LiveSubmission<Service>) {
        if !shared.submit(submission) {
            let reply = submission.reply
            Task { reply(.unavailable(LiveHub.closedMessage)) }
        }
    }

    /// A new client id, issued now by ``LiveOptions/now``: for commands the server numbers itself.
    public func newClient() -> LiveClientID {
        LiveClientID.issue(now: options.now())
    }

    static var closedMessage: String { "the server is shutting down" }

    /// Ends now every live session whose identity `matches`: its client gets the frames waiting for it,
    /// an error frame (code `disconnected`) with `reason`, and the close 4403. For access taken back (a
    /// revoked user, a removed member); a client still being admitted is left to
    /// ``LiveService/authenticate(_:)``, which should now refuse it.
    ///
    /// ```swift
    /// import StillwaterLive
    ///
    /// struct Room: Codable, Sendable { var lines: [String] = [] }
    /// struct Say: Action, Codable, Sendable {
    ///     var text: String
    ///     func reduce(_ state: inout Room) { state.lines.append(text) }
    /// }
    /// struct RoomView: LiveView {
    ///     var count: Int
    ///     static let liveFields: [LiveField<RoomView>] = [.value("count", \.count)]
    /// }
    /// struct Chat: LiveService {
    ///     func view(of state: Room) -> RoomView { RoomView(count: state.lines.count) }
    ///     func decide(_ command: String, state: Room, identity: String) -> LiveDecision<Say> { .accept(Say(text: command)) }
    ///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
    ///         .accepted(handshake.token ?? "guest")
    ///     }
    /// }
    /// let hub = try await LiveHub.open(Chat(), log: MemoryJournal<LiveLogState<Room>, LiveEntry<Say>>(), initial: Room())
    /// let ann = hub.connect(), bob = hub.connect()
    /// ann.receive(#"{"type":"hello","protocol":1,"token":"ann"}"#)
    /// bob.receive(#"{"type":"hello","protocol":1,"token":"bob"}"#)
    /// _ = (await ann.nextBatch(), await bob.nextBatch())    // the welcomes and snapshots
    /// // Ann left the team: her open sessions end; her next hello is checked again.
    /// print(hub.disconnect(where: { $0 == "ann" }, reason: "you left the team"))
    /// if case .frames(let frames)? = await ann.nextBatch() { print(frames[0]) }
    /// if case .close(let code, _)? = await ann.nextBatch() { print(code.rawValue, bob.phase) }
    /// // Prints "1",
    /// //        "{\"type\":\"error\",\"code\":\"disconnected\",\"message\":\"you left the team\"}",
    /// //        "4403 live"
    /// ```
    ///
    /// - Parameters:
    ///   - matches: Called once per live connection, with its identity, outside every lock of the hub.
    ///   - reason: The error frame's message, for a person.
    /// - Returns: How many sessions were ended.
    /// - Complexity: O(n) in the open connections.
    @discardableResult
    public func disconnect(where matches: (Service.Identity) -> Bool, reason: String) -> Int {
        var ended = 0
        for connection in shared.connections where connection.disconnect(where: matches, reason: reason) { ended += 1 }
        return ended
    }

    /// Sends every live client that is behind the newest view one frame that brings it there: a patch
    /// from the version it has (shared by every client at that version), or a snapshot when its version
    /// is no longer kept. A client whose last patch still waits to be written is skipped until it is.
    ///
    /// ``run()`` calls this every ``LiveOptions/patchInterval``; call it yourself to drive time in a test.
    ///
    /// Each audience's frames are made once and shared by its clients: the view of each version once, the
    /// patch from each version once. When the service shows presence, who joined and left since the last
    /// tick goes to every admitted client in one `presence` frame (made once).
    public func tick() {
        shared.tickStarts()
        let head = shared.head
        let connections = shared.connections
        // Grouped by the audience's number and the version: no audience is hashed per connection.
        var behind: [LiveSyncGroup: [LiveConnection<Service>]] = [:]
        for connection in connections {
            guard let from = connection.wantsSync(head: head.version) else { continue }
            // Set before the client went live (which the acquiring read above follows).
            let audience = connection.audienceIndex.load(ordering: .relaxed)
            guard audience != Int.min else { continue }
            behind[LiveSyncGroup(audience: audience, from: from), default: []].append(connection)
        }
        for (group, members) in behind {
            guard let audience = shared.audience(at: group.audience) else { continue }
            let frame = shared.syncFrame(for: audience, from: group.from, to: head, stream: stream)
            for connection in members { connection.sync(frame.text, from: group.from, to: frame.version) }
            reporter?.viewFrame(frame.text, connections: members.count)
        }
        if LiveHubShared<Service>.showsPresence, let presence = shared.takePresenceChanges() {
            for connection in connections where connection.audienceIndex.load(ordering: .relaxed) != Int.min {
                connection.presence(changes: presence.changes, whole: presence.whole)
            }
        }
    }

    /// Ticks while clients are behind, at most once per ``LiveOptions/patchInterval``, until the calling
    /// task is cancelled.
    ///
    /// A hub with no client, or whose clients all have the newest view, schedules no timer and uses no
    /// CPU: the loop waits until a new version is applied while a client is connected, or a client that
    /// was sent a patch is still behind, then waits one interval (so that the changes of that interval
    /// go out in one patch) and ticks.
    public func run() async {
        while await shared.waitForTick() {
            do {
                try await Task.sleep(for: options.patchInterval)
            } catch {
                return
            }
            tick()
        }
    }

    // MARK: Presence across a cluster

    /// The clients connected to this hub that the service shows in presence: each one's entry (the
    /// service's ``LiveService/presence(of:)``, encoded as JSON text), by client id. What a cluster's
    /// servers tell each other, so that every server's clients see everyone in the room.
    ///
    /// - Complexity: O(n) in the clients connected here.
    public var localPresence: [String: String] { shared.localPresence }

    /// Shows this hub's clients the clients another server of the cluster says are connected to it (its
    /// ``localPresence``), in place of what it said before, until `expires`: a server that stops
    /// telling (it died) has its clients leave once ``expirePresence(now:)`` finds its word expired.
    ///
    /// ```swift
    /// // Every few seconds, on each server, for each room (the exchange is the cluster's own):
    /// //   publish (node, hub.localPresence) to the others;
    /// //   for each (node, entries) received: hub.mergePresence(entries, from: node, expires: now + 15 s);
    /// //   hub.expirePresence(now: now)
    /// ```
    ///
    /// - Parameters:
    ///   - entries: The other server's ``localPresence``. An entry that is not valid JSON is left out.
    ///   - node: The other server's name, the same each time it tells.
    ///   - expires: When its word no longer holds.
    public func mergePresence(_ entries: [String: String], from node: String, expires: Date) {
        let valid = entries.filter { LiveJSON.isValid($0.value) }
        shared.mergePresence(valid, from: node, expires: expires)
    }

    /// Forgets now what `node` said is present (it stopped, and said so).
    public func forgetPresence(from node: String) {
        shared.forgetPresence(from: node)
    }

    /// Forgets what every other server said is present when its word expired at `now` (see
    /// ``mergePresence(_:from:expires:)``): its clients leave at the next tick.
    public func expirePresence(now: Date) {
        shared.expirePresence(now: now)
    }

    /// Tells a replica that the log has reached `head` (a notice from the database, say): it reads and
    /// applies the records up to it, in order.
    public func advance(to head: Int) {
        shared.raiseTarget(to: head)
    }

    /// Asks the log for its head and catches up to it; returns once applied.
    ///
    /// - Throws: What the log's `head()` throws.
    public func refresh() async throws {
        advance(to: try await worker.logHead())
        await settle()
    }

    /// Returns once every command submitted so far is answered and every head heard of is applied (or
    /// could not be read), and the snapshot being written then, if any, is written.
    public func settle() async {
        await shared.settle()
        await worker.snapshotsWritten()
    }

    /// Shuts the hub down: refuses new commands (``LiveOutcome/unavailable(_:)``), waits for the ones
    /// being written, writes a snapshot when the log holds records after its newest one (applied since
    /// the open, or replayed by it), so the next open replays nothing, and closes every connection
    /// with ``LiveCloseCode/goingAway`` once its waiting frames are written.
    public func close() async {
        let connections = shared.close()
        await shared.settle()
        await worker.finish()
        for connection in connections { connection.shutDown() }
    }
}

extension LiveHub where Service.Audience == LiveEveryone {
    /// The newest view, as every client is shown it.
    public var view: Service.View { view(for: .everyone) }
}

/// The clients a tick sends one frame: those of one audience (by its number) at one version.
struct LiveSyncGroup: Hashable {
    var audience: Int
    var from: Int
}

/// The options of a ``LiveHub``.
public struct LiveOptions: Sendable {
    /// The bounds of each connection.
    public var limits: LiveLimits
    /// How often ``LiveHub/run()`` sends the clients that are behind a patch: each gets at most one per
    /// interval, covering every version since its last. Longer means fewer frames and more latency.
    public var patchInterval: Duration
    /// How long a client has to send its hello and be admitted.
    public var helloTimeout: Duration
    /// How many recent views are kept: a client that resumes from one of them, or falls that far behind,
    /// gets a patch; from an older one, a snapshot.
    public var historyCapacity: Int
    /// How long the log remembers a client after its last recorded command (30 days by default). A
    /// client unseen for longer is forgotten, and a command it sends with its old id is refused
    /// (``LiveOutcome/clientExpired(_:)``), never applied. Kept in the log when the log is made, so that
    /// every replica forgets the same clients: a hub opening an existing log uses the log's (a log made
    /// before clients were numbered has the default).
    public var clientRetention: Duration = LiveOptions.defaultClientRetention
    /// The most clients of this server listed in `presence` frames (1 000 by default): the clients who
    /// join beyond it are not listed (nor their leaving), so that the whole list a joining client gets
    /// stays small (about 70 bytes an entry) however many are connected. A listed client who leaves makes
    /// room for those who join after.
    public var presenceLimit: Int = 1_000
    /// The clock for client ids and the age of clients (the wall clock by default); a test may move it.
    public var now: @Sendable () -> Date = { Date() }
    /// Told what the hub does: connections, commands with their timelines, view frames, snapshots, log
    /// failures (``LiveEvent``). Nil by default: the hub then makes no event and reads no clock for one.
    /// A hub opened by a ``LiveRooms`` opener with none set here uses the rooms' observer.
    public var observer: (any LiveObserver)?
    /// The room name this hub's events carry (``LiveEvent``), for a hub opened on its own (a team's
    /// board); nil by default. A hub a ``LiveRooms`` opener makes without one carries its room's name.
    public var observedRoom: String?
    /// The default ``clientRetention``: 30 days.
    public static var defaultClientRetention: Duration { .seconds(30 * 86_400) }
    /// How many records between two snapshots of the log (a restart replays about this many). A snapshot
    /// is written beside the appends: commands that arrive meanwhile are recorded and answered without
    /// waiting for it; the next snapshot is due once it is written.
    public var snapshotEvery: Int
    /// The most records read from the log at once when catching up.
    public var readLimit: Int

    /// Creates options; each has a default fit for a board of a few hundred rows.
    public init(
        limits: LiveLimits = LiveLimits(), patchInterval: Duration = .milliseconds(10), helloTimeout: Duration = .seconds(10),
        historyCapacity: Int = 128, snapshotEvery: Int = 1_000, readLimit: Int = 1_000
    ) {
        precondition(patchInterval > .zero, "LiveOptions(patchInterval:) must be positive (got \(patchInterval))")
        precondition(historyCapacity >= 1, "LiveOptions(historyCapacity:) must be at least 1 (got \(historyCapacity))")
        precondition(snapshotEvery >= 1, "LiveOptions(snapshotEvery:) must be at least 1 (got \(snapshotEvery))")
        precondition(readLimit >= 1, "LiveOptions(readLimit:) must be at least 1 (got \(readLimit))")
        self.limits = limits
        self.patchInterval = patchInterval
        self.helloTimeout = helloTimeout
        self.historyCapacity = historyCapacity
        self.snapshotEvery = snapshotEvery
        self.readLimit = readLimit
    }
}

/// Why a hub cannot open: its log's records do not follow on from its snapshot, or its view type
/// cannot be sent to clients (it does not encode as a JSON object).
public struct LiveHubError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in one line.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
