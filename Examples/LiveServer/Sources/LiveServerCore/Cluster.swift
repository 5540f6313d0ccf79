import Foundation
import Stillwater
import StillwaterLive
import StillwaterPostgres
import Synchronization

/// The PostgreSQL journal of a cluster's boards: one log per team, named by the team.
public typealias ClusterLog = PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>

/// A node of a cluster: its boards are replica hubs of logs in one PostgreSQL database, shared with the
/// other nodes, which also holds the teams and their token digests.
///
/// Each hub applies its log in order, its own clients' commands too only as the log ordered them, so every
/// replica is equal. The library's `PostgresFollower` tells each board's hub of its log's appends
/// (``LiveHub/advance(to:)``), by `LISTEN` and by reading each head every ``pollInterval``: a missed
/// notification or a lost connection costs a read, never an action. It reads the teams the same way.
///
/// Every board's clients see the clients of every node (`presence`): each node tells the database who is
/// connected to each of its boards every ``presenceInterval``, until three intervals later by the
/// database's clock (`PostgresPresenceExchange`). A node that stops removes its word at once; the clients
/// of a node that dies leave everywhere within four intervals (20 s with the default 5 s).
public final class ClusterNode: Sendable {
    /// How often each board's head (and the teams) are read when no notification came.
    public static let pollInterval = Duration.seconds(2)

    /// The log.
    public let log: ClusterLog
    private let follower: PostgresFollower<LiveLogState<Board>, LiveEntry<BoardAction>>
    /// Who is connected, told to and read from the other nodes.
    let presence: PostgresPresenceExchange<LiveLogState<Board>, LiveEntry<BoardAction>>
    /// The task exchanging presence, from ``start(waiting:)`` to ``stop()``.
    private let exchanging = Mutex<Task<Void, Never>?>(nil)

    /// The prefix of the keys under which the log's values hold the teams: `team/NAME`, with the
    /// SHA-256 digest of the team's token in lowercase hexadecimal as value.
    static let teamKeyPrefix = "team/"

    /// A node on `log` with no boards yet; ``open(_:service:initial:options:)`` adds them.
    ///
    /// - Parameter presenceInterval: How often the node tells the others who is connected to it (and
    ///   reads what they told); what it told holds for three intervals.
    /// - Precondition: `presenceInterval` is positive.
    public init(log: ClusterLog, presenceInterval: Duration = .seconds(5)) {
        self.log = log
        follower = PostgresFollower(journal: log, pollInterval: Self.pollInterval)
        // Unique among the nodes, also after a restart of this one (a dead node's word expires on its own).
        let node = "\(ProcessInfo.processInfo.hostName)-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
        presence = PostgresPresenceExchange(journal: log, node: node, interval: presenceInterval, ttl: presenceInterval * 3)
    }

    /// Makes the log's tables unless they exist and starts following the boards' logs and the teams.
    /// While the database cannot be reached (refused, cut, starting up), waits and tries again, calling
    /// `waiting` once per failed attempt (`PostgresJournal.prepare(waiting:)`); cancel the task to stop
    /// waiting.
    ///
    /// - Throws: What the database answers when it can be reached but refuses (a wrong user or
    ///   database, say), or `CancellationError` when cancelled while waiting.
    public func start(waiting: (PostgresRetry) -> Void = { _ in }) async throws {
        try await log.prepare(waiting: waiting)
        follower.start()
        let presence = presence
        exchanging.withLock { $0 = Task { await presence.run() } }
    }

    /// Opens the board of team `name` as a replica hub of its log: the log's newest snapshot (or
    /// `initial`, stored as its first, the same one on every node) and the records after it.
    ///
    /// - Throws: What the database answers.
    public func open(_ name: String, service: BoardService, initial: Board, options: LiveOptions) async throws -> LiveHub<BoardService> {
        let hub = try await LiveHub.open(service, log: log.log(named: name), initial: initial, options: options)
        follower.follow(name) { hub.advance(to: $0) }
        presence.share(hub, as: name)
        return hub
    }

    /// Stops following, removes this node's word on who is connected (its clients leave everywhere at the
    /// other nodes' next exchange), and closes the node's connections (after its hubs are closed).
    public func stop() async {
        follower.stop()
        if let task = exchanging.withLock({ $0.take() }) {
            task.cancel()
            await task.value
        }
        await log.close()
    }

    /// Calls `observer` with the teams each time the database's teams may have changed (a notification,
    /// or a poll), on the follower's task; a failed read is tried again at the next one.
    func onTeamsChanged(_ observer: @escaping @Sendable ([DataFolder.TeamEntry]) -> Void) {
        follower.onValuesChanged { [weak self] in
            guard let teams = try? await self?.storedTeams() else { return }
            observer(teams)
        }
    }

    /// The teams stored in the database, by name.
    func storedTeams() async throws -> [DataFolder.TeamEntry] {
        try await log.values().compactMap { key, value in
            guard key.hasPrefix(Self.teamKeyPrefix) else { return nil }
            return DataFolder.TeamEntry(name: String(key.dropFirst(Self.teamKeyPrefix.count)), tokenSHA256: value)
        }.sorted { $0.name < $1.name }
    }

    /// Stores `teams` (with `keepingStored`, only those the database has no entry for).
    func storeTeams(_ teams: [DataFolder.TeamEntry], keepingStored: Bool) async throws {
        try await log.setValues(
            Dictionary(teams.map { (Self.teamKeyPrefix + $0.name, $0.tokenSHA256) }, uniquingKeysWith: { _, last in last }),
            keepingStored: keepingStored)
    }
}
