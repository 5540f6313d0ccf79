import Foundation
import StillwaterPostgres
import PostgresNIO
import Stillwater
import StillwaterLive
import Synchronization

/// The PostgreSQL log of the cluster's boards: one log per team, named by the team.
public typealias BoardLog = PostgresJournal<Board, BoardAction>

/// Opens the board in `journal`'s log `name` as a replica hub of `service`: the log's newest snapshot
/// and the records after it, or for a new log a first snapshot of `initial`.
///
/// Nodes that open a new log at once agree on its stream identity (so a client moving between them
/// resumes instead of starting over): the first snapshot is stored before the hub opens, and the
/// database keeps the one that came first, which every hub then reads.
///
/// - Throws: What the database answers, or `LiveHubError` when the log's records do not follow on.
public func openReplicaHub(
    _ service: BoardService, journal: PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>, name: String,
    initial: Board, options: LiveOptions = LiveOptions()
) async throws -> LiveHub<BoardService> {
    if try await journal.newestSnapshot(of: name) == nil {
        try await journal.writeSnapshot(LiveLogState(state: initial), seq: 0, of: name)
    }
    return try await LiveHub.open(service, log: journal.log(named: name), initial: initial, options: options)
}

/// A node of a cluster: its boards are replicas of logs in one PostgreSQL database, shared with the other
/// nodes.
///
/// A node applies the log in sequence order to its own stores, and a command (its own clients' too) only
/// when it reads it back from the log, so every node reduces the same actions in the same order and every
/// replica is equal. It learns of appends by `LISTEN`; it reads what it lacks from the table, so a missed
/// notification or a lost connection costs a read, never an action. It also asks for each log's head
/// every ``pollInterval``, for a board that went quiet right after a missed notification.
public final class ClusterNode: Sendable {
    /// How often each board's head (and the teams) are read when no notification came.
    public static let pollInterval = Duration.seconds(2)

    /// The log.
    public let log: BoardLog
    private let boards: Mutex<[String: ReplicaWriter]>
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Told the teams whenever the database's change (set by ``onTeamsChanged(_:)``).
    private let teamsObserver = Mutex<(@Sendable ([DataFolder.TeamEntry]) -> Void)?>(nil)

    /// The prefix of the keys under which the log's values hold the teams: `team/NAME`, with the
    /// SHA-256 digest of the team's token in lowercase hexadecimal as value.
    static let teamKeyPrefix = "team/"

    /// A node on `log` with no boards yet; ``open(_:initial:snapshotEvery:)`` adds them.
    public init(log: BoardLog) {
        self.log = log
        boards = Mutex([:])
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
                        case .appended(let name, let head): self.replica(name)?.advance(to: head)
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

    /// Opens the board of team `name`: the log's newest snapshot (or `initial`, stored as its first) and
    /// the actions after it.
    ///
    /// - Throws: What the database answers.
    public func open(_ name: String, initial: @autoclosure () -> Board, snapshotEvery: Int) async throws -> TeamBoard {
        var (position, board) = try await log.open(name, initial: initial())
        while true {
            let records = try await log.records(of: name, after: position)
            guard !records.isEmpty else { break }
            for record in records {
                _ = board.accept(record.action.command, id: record.action.cid)
                position = record.seq
            }
        }
        let started = board, log = log
        var made: ReplicaWriter?
        let team = TeamBoard(board: started) { store in
            let writer = ReplicaWriter(
                name: name, board: started, position: position, log: log, store: store, snapshotEvery: snapshotEvery)
            made = writer
            return writer
        }
        boards.withLock { $0[name] = made! }
        return team
    }

    /// Stops listening, refuses commands on every board, and closes the node's connections.
    public func stop() async {
        task.withLock { $0?.cancel() }
        for board in boards.withLock({ Array($0.values) }) {
            board.close()
            await board.closeConnection()
        }
        await log.close()
    }

    /// A database error in one line: "no connection" when the database cannot be reached (refused,
    /// closed, timed out), the server's message for an error it reported, else the error's kind.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            return describe(error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError ?? PostgresJournalError("a transaction failed"))
        }
        guard let error = error as? PSQLError else { return String(String(describing: error).prefix(160)) }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return "no connection"
        case .server:
            return String((error.serverInfo?[.message] ?? "the database reported an error").prefix(160))
        default:
            return "\(error.code)"
        }
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
        if let error = error as? PostgresTransactionError {
            return isUnreachable(error.beginError ?? error.closureError ?? error.commitError ?? error.rollbackError ?? PostgresJournalError(""))
        }
        if error is PostgresJournalError { return describe(error).contains("did not answer") }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return true
        case .server:
            // Class 08 (connection exception) and 57P01-57P03 (shutting down, starting up).
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P")
        default:
            return false
        }
    }

    private func replica(_ name: String) -> ReplicaWriter? { boards.withLock { $0[name] } }

    /// Reads every board's head and catches up to it.
    private func readHeads() async {
        for (name, board) in boards.withLock({ $0 }) {
            guard let head = try? await log.head(of: name) else { return }
            board.advance(to: head)
        }
    }
}

/// A board's writer in a cluster: appends commands to the log and answers each once this node has read
/// it back from the log and applied it.
///
/// One batch is appended at a time (one transaction: the commands that arrived meanwhile share it). Reads
/// from the log run one at a time, in order, from the node's position to the newest head it heard of.
final class ReplicaWriter: BoardWriting {
    private struct Request {
        var command: BoardCommand
        var id: String?
        var reply: @Sendable (CommandOutcome) -> Void
    }

    /// A command in the log whose sender waits for this node to apply it.
    private struct Waiter {
        var duplicate: Bool
        var cid: String?
        var reply: @Sendable (CommandOutcome) -> Void
    }

    private struct State {
        /// The board with every action up to `position` applied: the store's state.
        var board: Board
        var position: Int64
        /// The newest head heard of.
        var target: Int64
        var reading = false
        var writing = false
        var closed = false
        var waiting: [Request] = []
        var waiters: [Int64: [Waiter]] = [:]
        /// The outcomes of the latest actions applied, by sequence number (for duplicates, and for
        /// senders whose append returned after this node read it).
        var outcomes: [Int64: CommandOutcome] = [:]
        var snapshotMark: Int64
    }

    /// How many outcomes are kept.
    static let keptOutcomes: Int64 = 20_000

    private let name: String
    private let log: BoardLog
    private let appender: BoardLog.Appender
    private let store: Store<Board>
    private let snapshotEvery: Int64
    private let state: Mutex<State>

    init(name: String, board: Board, position: Int64, log: BoardLog, store: Store<Board>, snapshotEvery: Int) {
        self.name = name
        self.log = log
        appender = log.makeAppender()
        self.store = store
        self.snapshotEvery = Int64(snapshotEvery)
        state = Mutex(State(board: board, position: position, target: position, snapshotMark: position / Int64(snapshotEvery)))
    }

    /// The sequence number of the last action applied.
    var position: Int64 { state.withLock { $0.position } }


    func submit(_ command: BoardCommand, id: String?, reply: @escaping @Sendable (CommandOutcome) -> Void) {
        let start: Bool? = state.withLock { state in
            guard !state.closed else { return nil }
            state.waiting.append(Request(command: command, id: id, reply: reply))
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        switch start {
        case nil: reply(.unavailable("the server is shutting down"))
        case true?: Task { await self.writeBatches() }
        case false?: break
        }
    }

    func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for request in waiting { request.reply(.unavailable("the server is shutting down")) }
    }

    /// Closes the connection appends use (after ``close()``).
    func closeConnection() async { await appender.close() }

    private func writeBatches() async {
        while true {
            let batch: [Request]? = state.withLock { state in
                guard !state.waiting.isEmpty, !state.closed else {
                    state.writing = false
                    return nil
                }
                defer { state.waiting = [] }
                return state.waiting
            }
            guard let batch else { return }
            await write(batch)
        }
    }

    private func write(_ batch: [Request]) async {
        let results: [BoardLog.Appended]
        do {
            results = try await log.append(
                batch.map { (cid: $0.id, action: BoardAction(command: $0.command, cid: $0.id)) }, to: name, using: appender)
        } catch {
            let message = "the board's database cannot be reached (\(ClusterNode.describe(error))); try again later"
            for request in batch { request.reply(.unavailable(message)) }
            return
        }
        var ready: [(@Sendable (CommandOutcome) -> Void, CommandOutcome)] = []
        let newest = state.withLock { state -> Int64 in
            for (request, result) in zip(batch, results) {
                var duplicate = false
                if case .duplicate = result { duplicate = true }
                let waiter = Waiter(duplicate: duplicate, cid: request.id, reply: request.reply)
                if result.seq <= state.position {
                    ready.append((request.reply, Self.outcome(for: waiter, at: result.seq, in: state)))
                } else {
                    state.waiters[result.seq, default: []].append(waiter)
                }
            }
            return results.map(\.seq).max() ?? 0
        }
        for (reply, outcome) in ready { reply(outcome) }
        advance(to: newest)
    }

    /// Reads and applies the log up to `head` at least, unless a read is under way (it goes on to the
    /// newest head heard of).
    func advance(to head: Int64) {
        let start = state.withLock { state -> Bool in
            state.target = max(state.target, head)
            guard !state.reading, !state.closed, state.position < state.target else { return false }
            state.reading = true
            return true
        }
        if start { Task { await self.read() } }
    }

    private func read() async {
        while true {
            let from: Int64? = state.withLock { state in
                guard state.position < state.target else {
                    state.reading = false
                    return nil
                }
                return state.position
            }
            guard let from else { return }
            let records: [BoardLog.Record]
            do {
                records = try await log.records(of: name, after: from)
            } catch {
                // The next notification, reconnection or poll starts again from the same position.
                state.withLock { $0.reading = false }
                return
            }
            guard let first = records.first else {
                state.withLock { $0.reading = false }
                return
            }
            if first.seq != from + 1 {
                // What this node lacks was pruned (it fell further behind than the log keeps): it starts
                // again from the newest snapshot.
                do {
                    try await restart(after: first.seq)
                } catch {
                    state.withLock { $0.reading = false }
                    return
                }
                continue
            }
            apply(records, after: from)
        }
    }

    /// Replaces the board with the log's newest snapshot, which must be at `seq - 1` or later, and
    /// tells the senders waiting for the actions it covers to try again (their commands were in the log;
    /// sent again with their ids, they are answered, not applied twice). Only the reading loop calls it.
    private func restart(after seq: Int64) async throws {
        let current = state.withLock { $0.board }
        let (position, board) = try await log.open(name, initial: current)
        guard position >= seq - 1 else {
            throw PostgresJournalError("log \(name): no snapshot covers the pruned actions before \(seq)")
        }
        store.dispatch(BoardReplacement(board: board))
        let stale = state.withLock { state -> [Waiter] in
            state.board = board
            state.position = position
            state.target = max(state.target, position)
            state.outcomes = [:]
            state.snapshotMark = position / snapshotEvery
            let stale = state.waiters.filter { $0.key <= position }
            for key in stale.keys { state.waiters[key] = nil }
            return stale.values.flatMap { $0 }
        }
        for waiter in stale { waiter.reply(.unavailable("this node fell behind the log and started again from its snapshot; try again")) }
    }

    /// Applies `records` (those after `position`, in order), one dispatch for them all, then answers
    /// the senders waiting for them. Only the reading loop calls it.
    private func apply(_ records: [BoardLog.Record], after position: Int64) {
        var next = state.withLock { $0.board }
        var accepted: [BoardAction] = []
        var outcomes: [(Int64, CommandOutcome)] = []
        var reached = position
        for record in records {
            guard record.seq == reached + 1 else { break }
            let outcome = next.accept(record.action.command, id: record.action.cid)
            if case .applied = outcome { accepted.append(record.action) }
            outcomes.append((record.seq, outcome))
            reached = record.seq
        }
        // The store first: a sender hears of its command after the board shows it.
        switch accepted.count {
        case 0: break
        case 1: store.dispatch(accepted[0])
        default: store.dispatch(BoardBatch(actions: accepted))
        }
        let board = next
        var ready: [(@Sendable (CommandOutcome) -> Void, CommandOutcome)] = []
        let snapshotDue = state.withLock { state -> Bool in
            state.board = board
            state.position = reached
            for (seq, outcome) in outcomes {
                state.outcomes[seq] = outcome
                state.outcomes[seq - Self.keptOutcomes] = nil
            }
            for (seq, _) in outcomes {
                guard let waiters = state.waiters.removeValue(forKey: seq) else { continue }
                for waiter in waiters { ready.append((waiter.reply, Self.outcome(for: waiter, at: seq, in: state))) }
            }
            let mark = reached / snapshotEvery
            guard mark > state.snapshotMark else { return false }
            state.snapshotMark = mark
            return true
        }
        for (reply, outcome) in ready { reply(outcome) }
        if snapshotDue {
            // Every node may write it; the first one stored wins, and a failure loses nothing (the log
            // holds every action).
            let log = log, name = name
            Task { try? await log.writeSnapshot(board, seq: reached, of: name) }
        }
    }

    /// What the sender of the action at `seq` is told, once it is applied.
    private static func outcome(for waiter: Waiter, at seq: Int64, in state: State) -> CommandOutcome {
        let recorded = state.outcomes[seq]
        guard waiter.duplicate else { return recorded ?? .applied(version: state.board.version) }
        switch recorded {
        case .applied(let version)?, .duplicate(let version)?: return .duplicate(version: version)
        case let other?: return other
        case nil:
            return .duplicate(version: waiter.cid.flatMap { state.board.recentCommands[$0] } ?? state.board.version)
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
        var ceiling = Self.first
        for _ in 1..<min(attempts, 16) where ceiling < Self.cap { ceiling *= 2 }
        ceiling = min(ceiling, Self.cap)
        return ceiling * Double.random(in: 0.5...1)
    }

    /// `delay` in seconds with one decimal (`1.3 s`).
    public static func describe(_ delay: Duration) -> String {
        let tenths = Int((Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18) * 10 + 0.5)
        return "\(tenths / 10).\(tenths % 10) s"
    }
}

/// Sets the whole board: a replica that starts again from a snapshot.
struct BoardReplacement: Action {
    var board: Board

    func reduce(_ state: inout Board) { state = board }
}
