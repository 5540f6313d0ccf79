import Foundation

/// Receives what a ``LiveHub`` (and ``LiveRooms``) do, one ``LiveEvent`` at a time: for logs, metrics
/// and traces, without the live library depending on any of them.
///
/// Set one as ``LiveOptions/observer``. The hub makes events only when an observer is set: a hub without
/// one reads no clock and builds nothing for it. ``record(_:)`` is called outside every lock of the hub,
/// from whichever task did the work (a connection's, the writer's, the tick's), possibly from several at
/// once; it should return quickly (count, or hand the event to a logger) and never wait on the hub.
///
/// ```swift
/// import StillwaterLive
/// import Synchronization
///
/// final class Counts: LiveObserver {
///     let commands = Mutex(0)
///     func record(_ event: LiveEvent) {
///         if case .command = event { commands.withLock { $0 += 1 } }
///     }
/// }
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
///     func decide(_ command: Int, state: Total, identity: String) -> LiveDecision<Add> {
///         command > 0 ? .accept(Add(amount: command)) : .reject("add a positive amount")
///     }
///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("guest") }
/// }
/// let counts = Counts()
/// var options = LiveOptions()
/// options.observer = counts
/// let hub = try await LiveHub.open(Adder(), log: MemoryJournal<LiveLogState<Total>, LiveEntry<Add>>(), initial: Total(),
///                                  options: options)
/// _ = await hub.perform(2, as: "server")
/// _ = await hub.perform(-1, as: "server")
/// print(counts.commands.withLock { $0 })
/// // Prints "2"
/// ```
///
/// The Hummingbird adapter ships one that speaks swift-log, swift-metrics and swift-distributed-tracing
/// (`LiveTelemetry`); ``LiveObserverGroup`` tells several.
public protocol LiveObserver: Sendable {
    /// Takes one event. Called outside every lock of the hub, possibly from several tasks at once.
    func record(_ event: LiveEvent)
}

/// Tells each of its observers every event, in their order: telemetry and a readiness check, say.
public struct LiveObserverGroup: LiveObserver {
    /// The observers, told in this order.
    public let observers: [any LiveObserver]

    /// A group of `observers`.
    public init(_ observers: [any LiveObserver]) {
        self.observers = observers
    }

    /// Tells every observer `event`, in order.
    public func record(_ event: LiveEvent) {
        for observer in observers { observer.record(event) }
    }
}

/// Something a hub, its connections or its rooms did, told to a ``LiveObserver``.
///
/// Events name the room (``LiveRooms``'s name for the hub, nil for a hub opened on its own), the
/// connection (``LiveConnectionInfo/connection``, unique in the process) and the client's identity only
/// as ``LiveService/observedIdentity(of:)`` tells it (nil by default: identities are not reported unless
/// the service says how). More cases may be added in later versions: switch over them with a `default`.
public enum LiveEvent: Sendable {
    /// A client connected (before its hello).
    case connectionOpened(LiveConnectionInfo)
    /// A client was admitted (its credentials accepted, its welcome and first view queued).
    case connectionAdmitted(LiveConnectionInfo)
    /// A connection ended. `code` is the close the server sent (``LiveCloseCode/tooSlow`` for a client
    /// that read too slowly), or nil when the socket closed without one (the client left, the network
    /// dropped). `duration` is how long it was open.
    case connectionClosed(LiveConnectionInfo, code: LiveCloseCode?, duration: Duration)
    /// A command was answered: its outcome and its whole timeline, from arrival to answer.
    case command(LiveCommandReport)
    /// A view frame was queued for `connections` clients of one audience at once: a patch or a
    /// snapshot of `bytes` UTF-8 bytes (the same text for each of them). Queued, not yet written: a
    /// connection that closes first never writes it.
    case viewFrame(room: String?, kind: LiveViewFrameKind, bytes: Int, connections: Int)
    /// A snapshot of the state at `version` was written to the log, taking `duration`.
    case snapshotWritten(room: String?, version: Int, duration: Duration)
    /// A snapshot of the state at `version` could not be written. Nothing is lost (the log keeps every
    /// record; a restart replays more of them); the next snapshot is tried after
    /// ``LiveOptions/snapshotEvery`` more records.
    case snapshotFailed(room: String?, version: Int, error: String)
    /// The log failed at something other than a snapshot: an append (the batch's commands were answered
    /// `unavailable`), a read while catching up, a reopen after it stopped.
    case logFailed(room: String?, operation: LiveLogOperation, error: String)
    /// ``LiveRooms`` opened a room's hub, taking `duration` (the log read and replayed).
    case roomOpened(room: String, duration: Duration)
    /// ``LiveRooms`` could not open a room: the opener threw `error` (the join that asked was refused
    /// with it).
    case roomOpenFailed(room: String, error: String)
    /// ``LiveRooms`` closed a room: idle for its timeout, or at shutdown. Its snapshot is written.
    case roomClosed(room: String)
    /// One round of a cluster's presence exchange failed for `room` (its database was unreachable, say):
    /// what the other servers said expires on its own. Reported by the exchange (StillwaterPostgres'
    /// `PostgresPresenceExchange`), through its hub's observer; `node` is this server's name in it.
    case presenceExchangeFailed(room: String, node: String, error: String)
}

/// Which connection an event is about.
public struct LiveConnectionInfo: Sendable, Equatable {
    /// The room the connection is in (``LiveRooms``'s name), or nil for a hub opened on its own.
    public var room: String?
    /// The connection's number: unique among the connections of this process, never reused.
    public var connection: UInt64
    /// Who the client is, as ``LiveService/observedIdentity(of:)`` tells it; nil before the client is
    /// admitted, or when the service does not tell.
    public var identity: String?

    /// Creates a description of a connection.
    public init(room: String?, connection: UInt64, identity: String?) {
        self.room = room
        self.connection = connection
        self.identity = identity
    }
}

/// What a view frame is.
public enum LiveViewFrameKind: String, Sendable, CaseIterable {
    /// The members that changed, from the version the client has.
    case patch
    /// The whole view.
    case snapshot
}

/// What the log was doing when it failed.
public enum LiveLogOperation: String, Sendable, CaseIterable {
    /// Recording a batch of commands: each was answered ``LiveOutcome/unavailable(_:)``.
    case append
    /// Reading other servers' records (or the records after a notice) to catch up.
    case read
    /// Opening the log again after it stopped (a failed write): until it opens, commands are answered
    /// ``LiveOutcome/unavailable(_:)``.
    case reopen
    /// Reading the newest snapshot to start again from it (a replica too far behind).
    case restart
}

/// One command, from its arrival to its answer: what ``LiveEvent/command(_:)`` carries.
public struct LiveCommandReport: Sendable {
    /// The room of the hub that answered it, or nil for a hub opened on its own.
    public var room: String?
    /// The connection that sent it, or nil for a command the server submitted itself
    /// (``LiveHub/perform(_:cid:as:)`` and its kin).
    public var connection: UInt64?
    /// The id its client numbers commands under, with its number, when numbered.
    public var client: LiveClientID?
    /// The command's number under ``client``.
    public var seq: Int?
    /// The command's `cid`, when it had one.
    public var cid: String?
    /// Who sent it, as ``LiveService/observedIdentity(of:)`` tells it (nil when the service does not).
    public var identity: String?
    /// What became of it.
    public var outcome: LiveOutcome
    /// When each step happened.
    public var timeline: LiveCommandTimeline

    /// Creates a report.
    public init(room: String?, connection: UInt64?, client: LiveClientID?, seq: Int?, cid: String?, identity: String?,
                outcome: LiveOutcome, timeline: LiveCommandTimeline) {
        self.room = room
        self.connection = connection
        self.client = client
        self.seq = seq
        self.cid = cid
        self.identity = identity
        self.outcome = outcome
        self.timeline = timeline
    }

    /// The outcome's name: `applied`, `duplicate`, `rejected`, `unavailable`, `out_of_order` or
    /// `client_expired` (a label for metrics).
    public var outcomeName: String {
        switch outcome {
        case .applied: "applied"
        case .duplicate: "duplicate"
        case .rejected: "rejected"
        case .unavailable: "unavailable"
        case .outOfOrder: "out_of_order"
        case .clientExpired: "client_expired"
        }
    }
}

/// The instants of one command's life, on the continuous clock, for spans built after the fact.
///
/// A command is decided, appended and applied with the others of its batch, so those instants are its
/// batch's. A step the command did not reach is nil: a duplicate or a refusal without a number is
/// answered without an append, and a command refused before deciding (out of order, expired, the hub
/// closing) has no decide either.
public struct LiveCommandTimeline: Sendable, Equatable {
    /// When the hub received it (the frame decoded, or ``LiveHub/submit(_:cid:as:reply:)`` called).
    public var received: ContinuousClock.Instant
    /// When its batch's decisions started (the first time, when another server's records made the
    /// batch be decided again).
    public var decideStarted: ContinuousClock.Instant?
    /// When its batch's decisions ended (the last time).
    public var decided: ContinuousClock.Instant?
    /// When its batch's append started.
    public var appendStarted: ContinuousClock.Instant?
    /// When the append returned: the command is durable from here on.
    public var appended: ContinuousClock.Instant?
    /// When the batch was applied to the state and the new version published.
    public var applied: ContinuousClock.Instant?
    /// When the sender was answered (the ack or error handed to its connection).
    public var answered: ContinuousClock.Instant
    /// How many times its batch was decided (more than 1 when other servers appended first).
    public var decisions: Int
    /// How many commands its batch held.
    public var batchSize: Int

    /// Creates a timeline.
    public init(received: ContinuousClock.Instant, decideStarted: ContinuousClock.Instant? = nil,
                decided: ContinuousClock.Instant? = nil, appendStarted: ContinuousClock.Instant? = nil,
                appended: ContinuousClock.Instant? = nil, applied: ContinuousClock.Instant? = nil,
                answered: ContinuousClock.Instant, decisions: Int = 0, batchSize: Int = 1) {
        self.received = received
        self.decideStarted = decideStarted
        self.decided = decided
        self.appendStarted = appendStarted
        self.appended = appended
        self.applied = applied
        self.answered = answered
        self.decisions = decisions
        self.batchSize = batchSize
    }

    /// From arrival to answer: what the client waited for its ack (less the network).
    public var ackLatency: Duration { received.duration(to: answered) }
    /// How long its batch's decisions took (every round), or nil when it was not decided.
    public var decideTime: Duration? {
        guard let decideStarted, let decided else { return nil }
        return decideStarted.duration(to: decided)
    }
    /// How long its batch's append took, or nil when it was not appended.
    public var appendTime: Duration? {
        guard let appendStarted, let appended else { return nil }
        return appendStarted.duration(to: appended)
    }
}
