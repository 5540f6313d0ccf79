#if Postgres
import Foundation
import Logging
import PostgresNIO
import Stillwater
import Synchronization

/// A log of actions shared by several processes, kept in PostgreSQL: for each log (a board, say) its
/// actions in order, each command's client-chosen id kept once, and snapshots of the state.
///
/// Three tables, named from a prefix (`stillwater` by default), made by ``prepare()``:
///
/// - `PREFIX_logs` (`log`, `head`): each log's newest sequence number. Appending locks the log's row, so
///   the appends to one log are serialised by the database and each gets the next numbers: a log's
///   sequence numbers are 1, 2, 3, … with no gap, and a reader that has everything up to *n* and sees a
///   head above *n* knows exactly what it lacks.
/// - `PREFIX_actions` (`log`, `seq`, `cid`, `action`): the actions, as JSON, unique by (`log`, `seq`) and
///   by (`log`, `cid`), so a command id is recorded once whoever sends it again.
/// - `PREFIX_snapshots` (`log`, `seq`, `state`): the state after action `seq`, as JSON; the newest two
///   of each log are kept.
///
/// - `PREFIX_values` (`key`, `value`): a few named texts shared by every process on the database (a
///   cluster's settings, say): ``values()``, ``setValues(_:keepingStored:)``.
///
/// **Retention.** Each snapshot prunes the actions behind it: those more than ``keptActions`` (10 000
/// unless set) before the newest snapshot are deleted. A new reader starts from the newest snapshot and
/// needs none of them; what is kept lets a reader that fell behind by up to that many actions catch up
/// from the table, and answers a command id sent again among them from the table.
///
/// Every append notifies the channel `PREFIX_log` with the payload `"HEAD LOG"` when it commits, and
/// every change of the values with the payload `"values"` (``events()`` listens to it). Reads and appends each take a connection of their own, made at first use
/// and made again after the database closed it, so a restarted database is used again without a restart
/// of this process; what fails meanwhile throws.
///
/// ```swift
/// let journal = try PostgresJournal<Int, Add>(url: "postgres://app@127.0.0.1:5432/app")
/// try await journal.prepare()
/// let start = try await journal.open("totals", initial: 0)     // (seq: 0, state: 0) the first time
/// let appender = journal.makeAppender()
/// let first = try await journal.append([(cid: "c1", action: Add(amount: 2))], to: "totals", using: appender)
/// let again = try await journal.append([(cid: "c1", action: Add(amount: 2))], to: "totals", using: appender)
/// print(first, again)
/// // Prints "[PostgresJournal<Int, Add>.Appended.appended(1)] [PostgresJournal<Int, Add>.Appended.duplicate(1)]"
/// ```
public final class PostgresJournal<State: Codable & Sendable, Entry: Codable & Sendable>: Sendable {
    /// What became of one appended action.
    public enum Appended: Equatable, Sendable {
        /// Recorded with this sequence number.
        case appended(Int64)
        /// Not recorded: its command id was recorded before, with this sequence number.
        case duplicate(Int64)

        /// The sequence number of the action, new or recorded before.
        public var seq: Int64 {
            switch self {
            case .appended(let seq), .duplicate(let seq): seq
            }
        }
    }

    /// One recorded action.
    public struct Record: Sendable {
        /// Its sequence number in its log.
        public var seq: Int64
        /// The client-chosen id it was appended with, if any.
        public var cid: String?
        /// The action.
        public var action: Entry
    }

    /// What ``events()`` reports.
    public enum Event: Equatable, Sendable {
        /// Listening (again): notifications from now on arrive; anything appended meanwhile must be read
        /// from the table.
        case listening
        /// The connection that listened was lost (the database stopped, say); it is made again.
        case lost(String)
        /// `log` has actions up to `head`.
        case appended(log: String, head: Int64)
        /// The values changed (read them with ``values()``).
        case valuesChanged
    }

    /// The connection settings read from the URL.
    public let configuration: PostgresConnection.Configuration
    /// How many actions before a log's newest snapshot are kept when a snapshot is written (older ones
    /// are deleted).
    public let keptActions: Int
    private let prefix: String
    private let logger: Logger
    private let reads: ConnectionSlot

    /// Names the database and tables; connects at first use.
    ///
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (also `postgresql://`); TLS is not used, so
    ///     keep the database on loopback or a private network.
    ///   - prefix: The tables' prefix: lowercase letters, digits and `_`, starting with a letter.
    ///   - logger: Where postgres-nio logs its connections' events.
    ///   - keptActions: How many actions before the newest snapshot to keep (see the retention note
    ///     above); 0 keeps none of them.
    /// - Throws: ``PostgresURLError`` naming what is wrong with `url`.
    public init(
        url: String, prefix: String = "stillwater", logger: Logger = Logger(label: "postgres-journal"),
        keptActions: Int = 10_000
    ) throws(PostgresURLError) {
        precondition(keptActions >= 0, "PostgresJournal(keptActions:) must not be negative (got \(keptActions))")
        self.keptActions = keptActions
        precondition(
            prefix.first.map({ $0 >= "a" && $0 <= "z" }) == true
                && prefix.allSatisfy({ ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }),
            "PostgresJournal(prefix:) must be lowercase letters, digits and _, starting with a letter; got \"\(prefix)\"")
        var configuration = try PostgresURL.configuration(from: url)
        configuration.options.connectTimeout = .seconds(3)
        // An appender that stops inside its transaction (a process paused, a machine that froze) holds the
        // log's lock, and every other appender waits: after 2 s idle in a transaction the database ends
        // that session, which rolls it back and frees the lock (the stopped appender's callers get an
        // error when it resumes, and send again with their ids).
        configuration.options.additionalStartupParameters = [("idle_in_transaction_session_timeout", "2000")]
        self.configuration = configuration
        self.prefix = prefix
        self.logger = logger
        reads = ConnectionSlot(configuration: configuration, logger: logger)
    }

    private var logs: String { prefix + "_logs" }
    private var actions: String { prefix + "_actions" }
    private var snapshots: String { prefix + "_snapshots" }
    private var valuesTable: String { prefix + "_values" }
    /// The channel every append notifies.
    public var channel: String { prefix + "_log" }

    /// Creates the tables unless they exist. Several processes may call it at once.
    ///
    /// - Throws: What the database answers (it cannot be reached, the user may not create tables).
    public func prepare() async throws {
        try await oneOff { connection in
            // One process at a time: concurrent CREATE TABLE IF NOT EXISTS may collide on the catalog.
            try await connection.query("SELECT pg_advisory_xact_lock(7405116)", logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: self.logs) (
                    log text PRIMARY KEY, head bigint NOT NULL DEFAULT 0)
                """, logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: self.actions) (
                    log text NOT NULL, seq bigint NOT NULL, cid text, action text NOT NULL,
                    recorded timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (log, seq), UNIQUE (log, cid))
                """, logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: self.snapshots) (
                    log text NOT NULL, seq bigint NOT NULL, state text NOT NULL, PRIMARY KEY (log, seq))
                """, logger: self.logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: self.valuesTable) (key text PRIMARY KEY, value text NOT NULL)
                """, logger: self.logger)
        }
    }

    /// Every stored value, by key.
    ///
    /// - Throws: What the database answers.
    public func values() async throws -> [String: String] {
        try await reads.use { connection in
            let rows = try await connection.query("SELECT key, value FROM \(unescaped: self.valuesTable)", logger: self.logger)
            var values: [String: String] = [:]
            for try await (key, value) in rows.decode((String, String).self) { values[key] = value }
            return values
        }
    }

    /// Stores `values` in one transaction, replacing what is stored under their keys (or, with
    /// `keepingStored`, only under keys that hold nothing yet), and notifies the channel with `"values"`
    /// when it commits.
    ///
    /// - Throws: What the database answers; then nothing was stored.
    public func setValues(_ values: [String: String], keepingStored: Bool = false) async throws {
        guard !values.isEmpty else { return }
        let keys = Array(values.keys), texts = keys.map { values[$0]! }
        try await oneOff { connection in
            if keepingStored {
                try await connection.query("""
                    INSERT INTO \(unescaped: self.valuesTable) (key, value) SELECT * FROM unnest(\(keys)::text[], \(texts)::text[])
                    ON CONFLICT (key) DO NOTHING
                    """, logger: self.logger)
            } else {
                try await connection.query("""
                    INSERT INTO \(unescaped: self.valuesTable) (key, value) SELECT * FROM unnest(\(keys)::text[], \(texts)::text[])
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, logger: self.logger)
            }
            try await connection.query("SELECT pg_notify(\(self.channel), 'values')", logger: self.logger)
        }
    }

    /// The newest snapshot of `log`, or, for a log that has none, `initial` stored as its snapshot at
    /// sequence number 0 (under the log's lock, so processes opening a new log at once agree on one).
    ///
    /// Read the actions after the returned `seq` with ``records(of:after:limit:)`` to bring it up to date.
    /// - Throws: What the database answers, or a decoding error for a snapshot that is not `State`.
    public func open(_ log: String, initial: @autoclosure () -> State) async throws -> (seq: Int64, state: State) {
        let initialText = try Self.encode(initial())
        let (seq, text) = try await oneOff { connection in
            let head = try await self.lockHead(of: log, on: connection)
            let rows = try await connection.query(
                "SELECT seq, state FROM \(unescaped: self.snapshots) WHERE log = \(log) ORDER BY seq DESC LIMIT 1",
                logger: self.logger)
            for try await (seq, state) in rows.decode((Int64, String).self) { return (seq, state) }
            guard head == 0 else { throw PostgresJournalError("log \(log) has \(head) actions and no snapshot") }
            try await connection.query(
                "INSERT INTO \(unescaped: self.snapshots) (log, seq, state) VALUES (\(log), 0, \(initialText))",
                logger: self.logger)
            return (Int64(0), initialText)
        }
        return (seq, try JSONDecoder().decode(State.self, from: Data(text.utf8)))
    }

    /// The newest snapshot of `log`, or `nil` when it has none (nothing is stored).
    ///
    /// - Throws: What the database answers, or a decoding error for a snapshot that is not `State`.
    public func newestSnapshot(of log: String) async throws -> (seq: Int64, state: State)? {
        let row = try await reads.use { connection -> (Int64, String)? in
            let rows = try await connection.query(
                "SELECT seq, state FROM \(unescaped: self.snapshots) WHERE log = \(log) ORDER BY seq DESC LIMIT 1",
                logger: self.logger)
            for try await (seq, state) in rows.decode((Int64, String).self) { return (seq, state) }
            return nil
        }
        guard let (seq, text) = row else { return nil }
        return (seq, try JSONDecoder().decode(State.self, from: Data(text.utf8)))
    }

    /// Appends `entries` to `log` in one transaction, in their order, and says what became of each.
    ///
    /// An entry whose `cid` is already recorded in `log` (or earlier in `entries`) is not appended again:
    /// it is answered ``Appended/duplicate(_:)`` with the sequence number it has. The others get the log's
    /// next sequence numbers. The channel is notified when the transaction commits; when this returns,
    /// the actions are durable (as durable as the database's commits).
    ///
    /// - Parameter appender: The connection to use: one per concurrent appender (see ``makeAppender()``).
    /// - Throws: What the database answers; then nothing of `entries` was appended — unless the
    ///   connection was lost during the commit, which cannot tell: append again with the same ids.
    public func append(
        _ entries: [(cid: String?, action: Entry)], to log: String, using appender: Appender
    ) async throws -> [Appended] {
        try await append(entries, to: log, using: appender, ifHeadIs: nil)
    }

    /// Appends `entries` to `log` as ``append(_:to:using:)`` does, but only if the log's head is still
    /// `head`: the check and the append are one transaction, which holds the log's head row locked, so
    /// no other node's append comes between them.
    ///
    /// - Parameters:
    ///   - entries: The entries, with their command ids.
    ///   - log: The log's name.
    ///   - appender: The connection to use.
    ///   - head: The sequence number the caller's decision saw; nil appends whatever the head.
    /// - Throws: `ActionLogConflict` with the log's head when it is not `head` (nothing appended), or what
    ///   ``append(_:to:using:)`` throws.
    public func append(
        _ entries: [(cid: String?, action: Entry)], to log: String, using appender: Appender, ifHeadIs head: Int64?
    ) async throws -> [Appended] {
        let texts = try entries.map { try Self.encode($0.action) }
        let expected = head
        return try await appender.slot.transaction { connection in
            let head = try await self.lockHead(of: log, on: connection)
            if let expected, expected != head { throw ActionLogConflict(head: Int(head)) }
            var known: [String: Int64] = [:]
            let cids = entries.compactMap(\.cid)
            if !cids.isEmpty {
                let rows = try await connection.query(
                    "SELECT cid, seq FROM \(unescaped: self.actions) WHERE log = \(log) AND cid = ANY(\(cids))",
                    logger: self.logger)
                for try await (cid, seq) in rows.decode((String, Int64).self) { known[cid] = seq }
            }
            var results: [Appended] = []
            var seqs: [Int64] = [], cidColumn: [String] = [], actionColumn: [String] = []
            var next = head
            for (entry, text) in zip(entries, texts) {
                if let cid = entry.cid, let seq = known[cid] {
                    results.append(.duplicate(seq))
                    continue
                }
                next += 1
                seqs.append(next)
                // A command id is never empty (an empty one is stored as NULL, no id).
                cidColumn.append(entry.cid ?? "")
                actionColumn.append(text)
                if let cid = entry.cid { known[cid] = next }
                results.append(.appended(next))
            }
            if !seqs.isEmpty {
                let payload = "\(next) \(log)"
                try await connection.query("""
                    WITH inserted AS (
                        INSERT INTO \(unescaped: self.actions) (log, seq, cid, action)
                        SELECT \(log), s, NULLIF(c, ''), a FROM unnest(\(seqs)::bigint[], \(cidColumn)::text[], \(actionColumn)::text[]) AS t(s, c, a)),
                    moved AS (UPDATE \(unescaped: self.logs) SET head = \(next) WHERE log = \(log))
                    SELECT pg_notify(\(self.channel), \(payload))
                    """, logger: self.logger)
            }
            return results
        }
    }

    /// A connection of its own for appends (a transaction holds its connection until it commits).
    public func makeAppender() -> Appender { Appender(slot: ConnectionSlot(configuration: configuration, logger: logger)) }

    /// The actions of `log` after sequence number `seq`, at most `limit` of them, in order.
    ///
    /// - Throws: What the database answers, or a decoding error for an action that is not `Entry`.
    public func records(of log: String, after seq: Int64, limit: Int = 1_000) async throws -> [Record] {
        let rows = try await reads.use { connection in
            var rows: [(Int64, String?, String)] = []
            let sequence = try await connection.query(
                "SELECT seq, cid, action FROM \(unescaped: self.actions) WHERE log = \(log) AND seq > \(seq) ORDER BY seq LIMIT \(limit)",
                logger: self.logger)
            for try await row in sequence.decode((Int64, String?, String).self) { rows.append(row) }
            return rows
        }
        let decoder = JSONDecoder()
        return try rows.map { row in
            Record(seq: row.0, cid: row.1, action: try decoder.decode(Entry.self, from: Data(row.2.utf8)))
        }
    }

    /// The sequence number of the last action of `log` (0 for a log with none).
    public func head(of log: String) async throws -> Int64 {
        try await reads.use { connection in
            let rows = try await connection.query("SELECT head FROM \(unescaped: self.logs) WHERE log = \(log)", logger: self.logger)
            for try await head in rows.decode(Int64.self) { return head }
            return 0
        }
    }

    /// Stores `state` as the snapshot of `log` after action `seq`, unless one is stored there already,
    /// removes the snapshots older than the newest two, and deletes the actions more than
    /// ``keptActions`` before the newest snapshot.
    public func writeSnapshot(_ state: State, seq: Int64, of log: String) async throws {
        let text = try Self.encode(state)
        let kept = Int64(keptActions)
        try await reads.use { connection in
            try await connection.query(
                "INSERT INTO \(unescaped: self.snapshots) (log, seq, state) VALUES (\(log), \(seq), \(text)) ON CONFLICT DO NOTHING",
                logger: self.logger)
            try await connection.query("""
                DELETE FROM \(unescaped: self.snapshots) WHERE log = \(log) AND seq < (
                    SELECT min(seq) FROM (SELECT seq FROM \(unescaped: self.snapshots) WHERE log = \(log) ORDER BY seq DESC LIMIT 2) AS newest)
                """, logger: self.logger)
            try await connection.query("""
                DELETE FROM \(unescaped: self.actions) WHERE log = \(log) AND seq <= (
                    SELECT max(seq) FROM \(unescaped: self.snapshots) WHERE log = \(log)) - \(kept)
                """, logger: self.logger)
        }
    }

    /// The sequence numbers of the snapshots of `log`, oldest first.
    public func snapshotSeqs(of log: String) async throws -> [Int64] {
        try await reads.use { connection in
            let rows = try await connection.query(
                "SELECT seq FROM \(unescaped: self.snapshots) WHERE log = \(log) ORDER BY seq", logger: self.logger)
            var seqs: [Int64] = []
            for try await seq in rows.decode(Int64.self) { seqs.append(seq) }
            return seqs
        }
    }

    /// The channel's notifications, on a connection of their own, for as long as the stream is iterated.
    ///
    /// The stream starts with ``Event/listening`` once the `LISTEN` is in place. When the connection is
    /// lost it reports ``Event/lost(_:)`` and connects again (after 0.1 s, doubling to 2 s while it
    /// fails, each wait drawn between half and all of that), then reports ``Event/listening`` again: read what was appended meanwhile from the table.
    /// Ending the iteration closes the connection.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let configuration = configuration, logger = logger, channel = channel
        let task = Task {
            let firstBackoff = RetryBackoff(first: .milliseconds(100), cap: .seconds(2))
            var backoff = firstBackoff
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration, id: ConnectionSlot.nextID(), logger: logger)
                    do {
                        try await connection.listen(on: channel) { notifications in
                            // A query after LISTEN returns once LISTEN is in effect (one connection runs its
                            // statements in order).
                            try await connection.query("SELECT 1", logger: logger)
                            continuation.yield(.listening)
                            backoff = firstBackoff
                            for try await notification in notifications {
                                if notification.payload == "values" {
                                    continuation.yield(.valuesChanged)
                                    continue
                                }
                                let parts = notification.payload.split(separator: " ", maxSplits: 1)
                                guard parts.count == 2, let head = Int64(parts[0]) else { continue }
                                continuation.yield(.appended(log: String(parts[1]), head: head))
                            }
                        }
                        try? await connection.close()
                        continuation.yield(.lost("the notifications ended"))
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                } catch {
                    if Task.isCancelled { break }
                    continuation.yield(.lost(String(describing: error)))
                }
                try? await Task.sleep(for: backoff.next())
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Closes the connections this journal made (appenders close their own with ``Appender/close()``).
    public func close() async { await reads.close() }

    /// Runs `body` in a transaction on a connection of its own, closed afterwards (the shared reading
    /// connection runs other callers' statements in between, which must stay out of a transaction).
    private func oneOff<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let slot = ConnectionSlot(configuration: configuration, logger: logger)
        do {
            let result = try await slot.transaction(body)
            await slot.close()
            return result
        } catch {
            await slot.close()
            throw error
        }
    }

    private func lockHead(of log: String, on connection: PostgresConnection) async throws -> Int64 {
        // Makes the log's row if it is new, and locks it until the transaction ends either way.
        let rows = try await connection.query("""
            INSERT INTO \(unescaped: logs) (log) VALUES (\(log))
            ON CONFLICT (log) DO UPDATE SET head = \(unescaped: logs).head RETURNING head
            """, logger: logger)
        for try await head in rows.decode(Int64.self) { return head }
        throw PostgresJournalError("no row for log \(log)")
    }

    private static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    /// A connection used for appends only (see ``PostgresJournal/makeAppender()``).
    public final class Appender: Sendable {
        let slot: ConnectionSlot
        init(slot: ConnectionSlot) { self.slot = slot }

        /// Closes its connection.
        public func close() async { await slot.close() }
    }
}

/// A failure of the journal that the database did not report (its tables hold something unexpected).
public struct PostgresJournalError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    /// Whether the database did not answer in time (``PostgresFailure/isUnreachable(_:)`` says so).
    let isTimeout: Bool
    /// An error saying `description`.
    public init(_ description: String) { self.init(description, isTimeout: false) }

    init(_ description: String, isTimeout: Bool) {
        self.description = description
        self.isTimeout = isTimeout
    }
}

/// One connection, made at first use and made again when the database closed it.
///
/// Callers may run statements on it at once (the connection runs them in order); a transaction must have
/// the connection to itself, so an appender's slot is used by one caller at a time.
final class ConnectionSlot: Sendable {
    private static let ids = Atomic<Int>(0)
    static func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }

    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// The connection, if one is open; `closed` once ``close()`` was called (nothing connects again).
    private let current = Mutex<(connection: PostgresConnection?, closed: Bool)>((nil, false))

    init(configuration: PostgresConnection.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// How long one use of the connection (connecting included) may take before it is given up.
    static let timeout = Duration.seconds(5)

    /// Runs `body` on the connection, connecting first when there is none.
    ///
    /// A use that takes longer than ``timeout`` throws, and the connection is closed (which fails what it
    /// was waiting for) and made again at the next use: a connection cut while the database restarts
    /// must not hold up its caller for ever.
    func use<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let used = UsedConnection()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let answer = Answer(continuation)
            // Not a task group: a group waits for all its tasks, and a statement sent on a connection the
            // database has just cut was seen never to finish.
            let timer = Task {
                try await Task.sleep(for: Self.timeout)
                guard answer.resume(with: .failure(PostgresJournalError("the database did not answer within \(Self.timeout)", isTimeout: true))) else { return }
                if let connection = used.connection.withLock({ $0 }) {
                    self.forget(connection)
                    connection.close().whenComplete { _ in }
                }
            }
            Task {
                do {
                    let connection = try await self.connection()
                    used.connection.withLock { $0 = connection }
                    do {
                        let value = try await body(connection)
                        if answer.resume(with: .success(value)) { timer.cancel() }
                    } catch {
                        if connection.isClosed { self.forget(connection) }
                        if answer.resume(with: .failure(error)) { timer.cancel() }
                    }
                } catch {
                    if answer.resume(with: .failure(error)) { timer.cancel() }
                }
            }
        }
    }

    private func forget(_ connection: PostgresConnection) {
        current.withLock { if $0.connection === connection { $0.connection = nil } }
    }

    func transaction<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let logger = logger
        return try await use { connection in
            do {
                return try await connection.withTransaction(logger: logger) { try await body($0) }
            } catch let error as PostgresTransactionError {
                // A refusal the body chose (a moved head) reaches the caller as itself once rolled back.
                if let conflict = error.closureError as? ActionLogConflict, error.rollbackError == nil { throw conflict }
                throw error
            }
        }
    }

    private func connection() async throws -> PostgresConnection {
        let (open, closed) = current.withLock { ($0.connection, $0.closed) }
        if closed { throw PostgresJournalError("the journal was closed") }
        if let open, !open.isClosed { return open }
        let made = try await PostgresConnection.connect(configuration: configuration, id: Self.nextID(), logger: logger)
        // Another caller may have connected meanwhile, or the slot been closed: then this one goes.
        let kept: PostgresConnection? = current.withLock { current in
            if current.closed { return nil }
            if let other = current.connection, !other.isClosed { return other }
            current.connection = made
            return made
        }
        if kept !== made { try? await made.close() }
        guard let kept else { throw PostgresJournalError("the journal was closed") }
        return kept
    }

    func close() async {
        let connection = current.withLock { current in
            defer { current = (nil, true) }
            return current.connection
        }
        try? await connection?.close()
    }
}

/// The connection a use of a ``ConnectionSlot`` got, for closing it when the use takes too long.
final class UsedConnection: Sendable {
    let connection = Mutex<PostgresConnection?>(nil)
}

/// A continuation resumed once: by the use's result or by its timeout, whichever comes first.
final class Answer<R: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<R, any Error>?>

    init(_ continuation: CheckedContinuation<R, any Error>) { self.continuation = Mutex(continuation) }

    /// Resumes with `result` unless resumed before; says whether this call did.
    func resume(with result: Result<R, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ state in defer { state = nil }; return state }) else { return false }
        continuation.resume(with: result)
        return true
    }
}

/// A `postgres://` URL that cannot be used.
public struct PostgresURLError: Error, CustomStringConvertible {
    /// What is wrong, naming the URL's part.
    public var description: String
}

/// Reads connection settings from a URL.
enum PostgresURL {
    static func configuration(from text: String) throws(PostgresURLError) -> PostgresConnection.Configuration {
        guard let url = URLComponents(string: text), let scheme = url.scheme,
              scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresURLError(description: "\"\(text)\" is not a postgres:// URL (postgres://USER@HOST:PORT/DATABASE)")
        }
        guard let host = url.host, !host.isEmpty else { throw PostgresURLError(description: "\"\(text)\" names no host") }
        guard let user = url.user, !user.isEmpty else { throw PostgresURLError(description: "\"\(text)\" names no user") }
        let port = url.port ?? 5432
        guard (1...65_535).contains(port) else { throw PostgresURLError(description: "\"\(text)\" has port \(port), not 1 to 65535") }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        return PostgresConnection.Configuration(
            host: host, port: port, username: user, password: url.password,
            database: database.isEmpty ? user : database, tls: .disable)
    }
}
#endif
