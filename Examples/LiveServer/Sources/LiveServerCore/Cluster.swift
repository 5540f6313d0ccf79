import Foundation
import PostgresNIO
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
/// replica is equal. The node learns of appends by `LISTEN` and tells the board's hub
/// (``LiveHub/advance(to:)``), which reads what it lacks: a missed notification or a lost connection
/// costs a read, never an action. It also reads each log's head every ``pollInterval``, for a board that
/// went quiet right after a missed notification.
public final class ClusterNode: Sendable {
    /// How often each board's head (and the teams) are read when no notification came.
    public static let pollInterval = Duration.seconds(2)

    /// The log.
    public let log: ClusterLog
    private let hubs = Mutex<[String: LiveHub<BoardService>]>([:])
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Told the teams whenever the database's change (set by ``onTeamsChanged(_:)``).
    private let teamsObserver = Mutex<(@Sendable ([DataFolder.TeamEntry]) -> Void)?>(nil)

    /// The prefix of the keys under which the log's values hold the teams: `team/NAME`, with the
    /// SHA-256 digest of the team's token in lowercase hexadecimal as value.
    static let teamKeyPrefix = "team/"

    /// A node on `log` with no boards yet; ``open(_:service:initial:options:)`` adds them.
    public init(log: ClusterLog) {
        self.log = log
    }

    /// Makes the log's tables unless they exist and starts listening for appends. While the database
    /// cannot be reached (refused, cut, starting up), waits and tries again with ``Backoff``, calling
    /// `waiting` once per failed attempt with one line that says so; cancel the task to stop waiting.
    ///
    /// - Throws: What the database answers when it can be reached but refuses (a wrong user or
    ///   database, say), or `CancellationError` when cancelled while waiting.
    public func start(waiting: (String) -> Void = { _ in }) async throws {
        var backoff = Backoff()
        while true {
            do {
                try await log.prepare()
                break
            } catch where Self.isUnreachable(error) {
                let delay = backoff.next()
                waiting("the database cannot be reached (\(Self.describe(error))); attempt \(backoff.attempts), trying again in \(Backoff.describe(delay))")
                try await Task.sleep(for: delay)
            }
        }
        let events = log.events()
        let started = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events {
                        switch event {
                        case .appended(let name, let head): self.hubs.withLock { $0[name] }?.advance(to: Int(head))
                        case .listening:
                            await self.readHeads()
                            await self.readTeams()
                        case .valuesChanged: await self.readTeams()
                        case .lost: break
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.pollInterval)
                        await self.readHeads()
                        await self.readTeams()
                    }
                }
            }
        }
        task.withLock { $0 = started }
    }

    /// Opens the board of team `name` as a replica hub of its log: the log's newest snapshot (or
    /// `initial`, stored as its first, the same one on every node) and the records after it.
    ///
    /// - Throws: What the database answers.
    public func open(_ name: String, service: BoardService, initial: Board, options: LiveOptions) async throws -> LiveHub<BoardService> {
        let hub = try await LiveHub.open(service, log: log.log(named: name), initial: initial, options: options)
        hubs.withLock { $0[name] = hub }
        return hub
    }

    /// Stops listening and closes the node's connections (after its hubs are closed).
    public func stop() async {
        task.withLock { $0?.cancel() }
        await log.close()
    }

    /// A database error in one line: "no connection" when the database cannot be reached (refused,
    /// closed, timed out), the server's message for an error it reported, else the error's kind.
    public static func describe(_ error: any Error) -> String {
        let error = cause(of: error)
        guard let error = error as? PSQLError else { return String(String(describing: error).prefix(160)) }
        if isConnectionLoss(error) { return "no connection" }
        guard error.code == .server else { return "\(error.code)" }
        return String((error.serverInfo?[.message] ?? "the database reported an error").prefix(160))
    }

    /// The error that made a transaction fail, or `error` itself when it is not a transaction's.
    private static func cause(of error: any Error) -> any Error {
        guard let error = error as? PostgresTransactionError else { return error }
        return error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError ?? PostgresJournalError("a transaction failed")
    }

    /// Whether `error` says the connection was refused, cut or closed.
    private static func isConnectionLoss(_ error: PSQLError) -> Bool {
        [.connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed].contains(error.code)
    }

    /// Calls `observer` with the teams each time the database's teams change (a notification, or what a
    /// poll finds after a lost one), on the node's listening task.
    func onTeamsChanged(_ observer: @escaping @Sendable ([DataFolder.TeamEntry]) -> Void) {
        teamsObserver.withLock { $0 = observer }
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

    /// Reads the teams and tells the observer; a failed read is retried at the next poll or notification.
    private func readTeams() async {
        guard let observer = teamsObserver.withLock({ $0 }), let teams = try? await storedTeams() else { return }
        observer(teams)
    }

    /// Whether `error` says the database could not be reached (no connection, a connection cut, no
    /// answer in time, or a server that is starting or shutting down), rather than refusing the request.
    public static func isUnreachable(_ error: any Error) -> Bool {
        let error = cause(of: error)
        if error is PostgresJournalError { return describe(error).contains("did not answer") }
        guard let error = error as? PSQLError else { return false }
        // Class 08 (connection exception) and 57P01-57P03 (shutting down, starting up).
        let state = error.code == .server ? error.serverInfo?[.sqlState] ?? "" : ""
        return isConnectionLoss(error) || state.hasPrefix("08") || state.hasPrefix("57P")
    }

    /// Reads every board's head and tells its hub; a failed read is tried again at the next poll.
    private func readHeads() async {
        for (name, hub) in hubs.withLock({ $0 }) {
            guard let head = try? await log.head(of: name) else { return }
            hub.advance(to: Int(head))
        }
    }
}

/// The waits between attempts to reach a database: 0.25 s, doubling to at most ``cap`` (5 s), each one
/// drawn at random between half and all of that (jitter, so nodes started together do not retry in step).
public struct Backoff: Sendable {
    /// The longest wait.
    public static let cap = Duration.seconds(5)
    /// The first wait, before jitter.
    public static let first = Duration.milliseconds(250)

    /// The attempts that failed so far (the calls to ``next()``).
    public private(set) var attempts = 0

    /// A backoff before its first attempt.
    public init() {}

    /// The wait after one more failed attempt.
    public mutating func next() -> Duration {
        attempts += 1
        return min(Self.first * (1 << min(attempts - 1, 8)), Self.cap) * Double.random(in: 0.5...1)
    }

    /// `delay` in seconds with one decimal (`1.3 s`).
    public static func describe(_ delay: Duration) -> String {
        let tenths = Int((Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18) * 10 + 0.5)
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
