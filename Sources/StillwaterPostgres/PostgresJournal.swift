#if Postgres
import Foundation
import Logging
import PostgresNIO
import Stillwater
import Synchronization

/// Why the listening connection's keep-alive closed it, once it did.
final class LostReason: Sendable {
    let text = Mutex<String?>(nil)
}

/// Numbers for the connections the journal makes outside its pool.
enum ConnectionIDs {
    private static let last = Atomic<Int>(0)
    static func next() -> Int { last.add(1, ordering: .relaxed).newValue }
}

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
/// - `PREFIX_presence` (`log`, `node`, `entries`, `expires`): who is connected to each server, per log,
///   until a time by the database's clock: ``publishPresence(_:of:node:ttl:)``,
///   ``presence(of:except:)``, used by ``PostgresPresenceExchange``.
///
/// **Retention.** Each snapshot prunes the actions behind it: those more than ``keptActions`` (10 000
/// unless set) before the newest snapshot are deleted. A new reader starts from the newest snapshot and
/// needs none of them; what is kept lets a reader that fell behind by up to that many actions catch up
/// from the table, and answers a command id sent again among them from the table.
///
/// Every append notifies the channel `PREFIX_log` with the payload `"HEAD LOG"` when it commits, and
/// every change of the values with the payload `"values"` (``events()`` listens to it).
///
/// **Connections.** Reads and appends lease a connection from postgres-nio's pool (`PostgresClient`),
/// which the journal runs on a task of its own from its creation until ``close()`` (or until it is
/// freed): there is no service to add to a `ServiceGroup`. The pool makes connections as they are needed,
/// up to ``PostgresJournalOptions/maximumConnections``, keeps idle ones alive with `SELECT 1`, and makes
/// new ones when the database closed the old (a restarted database is used again without a restart of
/// this process). A caller waits for a connection while all are leased; its wait and its statements take
/// at most ``PostgresJournalOptions/timeout`` (5 s unless set), and cancelling the calling task ends its
/// wait. What fails meanwhile throws. ``events()`` listens on one more connection, its own.
///
/// **TLS.** The URL's `sslmode` and `sslrootcert` parameters say whether and how the connections use TLS,
/// as libpq reads them (``PostgresSSLMode``; `prefer` without them).
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

    /// The settings of one connection, read from the URL: the listening connection's
    /// (``events()``) and ``prepare()``'s; the pool's connections are made with the same.
    public let configuration: PostgresConnection.Configuration
    /// Whether and how the connections use TLS: the URL's `sslmode` (``PostgresSSLMode/prefer`` without it).
    public let sslMode: PostgresSSLMode
    /// The pool's size and the timeouts.
    public let options: PostgresJournalOptions
    /// How many actions before a log's newest snapshot are kept when a snapshot is written (older ones
    /// are deleted).
    public let keptActions: Int
    private let prefix: String
    let logger: Logger
    /// The name the listening connection gives the database (`application_name`, seen in
    /// `pg_stat_activity`): the URL's `application_name` with ` listen` after it, else `stillwater listen`.
    public let listeningName: String
    private let pool: ConnectionPool

    /// Names the database and tables; connects at first use, with the default ``PostgresJournalOptions``.
    ///
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]` (also `postgresql://`). The
    ///     parameters libpq names `sslmode` (``PostgresSSLMode``: `disable`, `prefer` — the default —,
    ///     `require`, `verify-ca`, `verify-full`), `sslrootcert` (a PEM file of the roots to trust, or
    ///     `system`), `hostaddr` (the IP address to connect to, while the certificate is checked against
    ///     HOST; swift-nio-ssl also takes a certificate that names the address connected to) and `application_name` are read; any other is refused.
    ///   - prefix: The tables' prefix: lowercase letters, digits and `_`, starting with a letter.
    ///   - logger: Where postgres-nio logs its connections' events.
    ///   - keptActions: How many actions before the newest snapshot to keep (see the retention note
    ///     above); 0 keeps none of them.
    /// - Throws: ``PostgresURLError`` naming what is wrong with `url` (a parameter by its name).
    /// - Precondition: `prefix` is as described, and `keptActions` is not negative
    ///   (``init(url:prefix:logger:keptActions:options:)`` throws for them instead).
    public convenience init(
        url: String, prefix: String = "stillwater", logger: Logger = Logger(label: "postgres-journal"),
        keptActions: Int = 10_000
    ) throws(PostgresURLError) {
        precondition(keptActions >= 0, "PostgresJournal(keptActions:) must not be negative (got \(keptActions))")
        precondition(Self.isPrefix(prefix),
            "PostgresJournal(prefix:) must be lowercase letters, digits and _, starting with a letter; got \"\(prefix)\"")
        let parsed = try PostgresURL(url)
        self.init(url: parsed, connection: try parsed.connectionConfiguration(), prefix: prefix, logger: logger,
                  keptActions: keptActions, options: PostgresJournalOptions())
    }

    /// Names the database and tables, with the pool's size and timeouts set; connects at first use.
    ///
    /// - Parameters:
    ///   - url: As ``init(url:prefix:logger:keptActions:)`` reads it.
    ///   - prefix: The tables' prefix: lowercase letters, digits and `_`, starting with a letter.
    ///   - logger: Where postgres-nio logs its connections' events.
    ///   - keptActions: How many actions before the newest snapshot to keep; 0 keeps none of them.
    ///   - options: The pool's size and the timeouts.
    /// - Throws: ``PostgresURLError`` naming what is wrong with `url`; ``PostgresOptionsError`` naming a
    ///   setting out of its range, a `prefix` that is not as described, or a negative `keptActions`.
    public convenience init(
        url: String, prefix: String = "stillwater", logger: Logger = Logger(label: "postgres-journal"),
        keptActions: Int = 10_000, options: PostgresJournalOptions
    ) throws {
        if let problem = options.problem() { throw PostgresOptionsError(description: problem) }
        guard keptActions >= 0 else { throw PostgresOptionsError(description: "keptActions must not be negative; got \(keptActions)") }
        guard Self.isPrefix(prefix) else {
            throw PostgresOptionsError(description: "prefix must be lowercase letters, digits and _, starting with a letter; got \"\(prefix)\"")
        }
        let parsed = try PostgresURL(url)
        self.init(url: parsed, connection: try parsed.connectionConfiguration(), prefix: prefix, logger: logger,
                  keptActions: keptActions, options: options)
    }

    private init(
        url: PostgresURL, connection: PostgresConnection.Configuration, prefix: String, logger: Logger, keptActions: Int,
        options: PostgresJournalOptions
    ) {
        // An appender that stops inside its transaction (a process paused, a machine that froze) holds the
        // log's lock, and every other appender waits: after 2 s idle in a transaction the database ends
        // that session, which rolls it back and frees the lock (the stopped appender's callers get an
        // error when it resumes, and send again with their ids).
        var parameters = [("idle_in_transaction_session_timeout", "2000")]
        if let name = url.applicationName { parameters.append(("application_name", name)) }
        var configuration = connection
        configuration.options.connectTimeout = TimeAmount.nanoseconds(Self.nanoseconds(options.connectTimeout))
        configuration.options.additionalStartupParameters = parameters
        var client = url.clientConfiguration()
        client.options.connectTimeout = options.connectTimeout
        client.options.additionalStartupParameters = parameters
        client.options.maximumConnections = options.maximumConnections
        client.options.minimumConnections = options.minimumConnections
        client.options.connectionIdleTimeout = options.idleTimeout
        client.options.keepAliveBehavior = .init(frequency: options.keepAliveInterval)
        self.configuration = configuration
        self.sslMode = url.sslMode
        self.options = options
        self.keptActions = keptActions
        self.prefix = prefix
        self.logger = logger
        self.listeningName = (url.applicationName ?? "stillwater") + " listen"
        pool = ConnectionPool(configuration: client, timeout: options.timeout, logger: logger)
    }

    deinit { pool.cancel() }

    private static func isPrefix(_ prefix: String) -> Bool {
        prefix.first.map({ $0 >= "a" && $0 <= "z" }) == true
            && prefix.allSatisfy({ ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "_" })
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    private var logs: String { prefix + "_logs" }
    private var actions: String { prefix + "_actions" }
    private var snapshots: String { prefix + "_snapshots" }
    private var valuesTable: String { prefix + "_values" }
    private var presenceTable: String { prefix + "_presence" }
    /// The channel every append notifies.
    public var channel: String { prefix + "_log" }

    /// Creates the tables unless they exist. Several processes may call it at once.
    ///
    /// - Throws: What the database answers (it cannot be reached, the user may not create tables).
    public func prepare() async throws {
        try await alone { connection in
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
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: self.presenceTable) (
                    log text NOT NULL, node text NOT NULL, entries text NOT NULL, expires timestamptz NOT NULL,
                    PRIMARY KEY (log, node))
                """, logger: self.logger)
        }
    }

    // MARK: Presence

    /// Stores who is connected to `node` for `log` (each client's entry as JSON text, by client id, as
    /// `LiveHub.localPresence` gives it), until `ttl` from now by the database's clock; an empty list
    /// removes the node's row. The clocks of the servers do not matter: only the database's is read.
    ///
    /// - Throws: What the database answers.
    public func publishPresence(_ entries: [String: String], of log: String, node: String, ttl: Duration) async throws {
        let milliseconds = Self.nanoseconds(ttl) / 1_000_000
        let text = String(decoding: try JSONEncoder().encode(entries), as: UTF8.self)
        try await pool.withConnection { connection in
            if entries.isEmpty {
                _ = try await connection.query("""
                    DELETE FROM \(unescaped: self.presenceTable) WHERE log = \(log) AND node = \(node)
                    """, logger: self.logger)
            } else {
                _ = try await connection.query("""
                    INSERT INTO \(unescaped: self.presenceTable) (log, node, entries, expires)
                    VALUES (\(log), \(node), \(text), now() + \(milliseconds) * interval '1 millisecond')
                    ON CONFLICT (log, node) DO UPDATE SET entries = excluded.entries, expires = excluded.expires
                    """, logger: self.logger)
            }
        }
    }

    /// Who the other nodes say is connected for `log`, by node (rows whose time has not passed by the
    /// database's clock; `node`'s own left out). A row that does not decode is left out.
    ///
    /// - Throws: What the database answers.
    public func presence(of log: String, except node: String) async throws -> [String: [String: String]] {
        try await pool.withConnection { connection in
            let rows = try await connection.query("""
                SELECT node, entries FROM \(unescaped: self.presenceTable)
                WHERE log = \(log) AND node <> \(node) AND expires > now()
                """, logger: self.logger)
            var found: [String: [String: String]] = [:]
            for try await (other, text) in rows.decode((String, String).self) {
                do {
                    found[other] = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
                } catch {
                    // Another server's row that does not read is left out of the round, and said so.
                    self.logger.warning("a presence row does not decode; it is left out", metadata: [
                        "log": "\(log)", "node": "\(other)", "error": "\(error)",
                    ])
                }
            }
            return found
        }
    }

    /// Every stored value, by key.
    ///
    /// - Throws: What the database answers.
    public func values() async throws -> [String: String] {
        try await pool.withConnection { connection in
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
        try await pool.transaction(logger: logger) { connection in
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
        let (seq, text) = try await pool.transaction(logger: logger) { connection in
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
        let row = try await pool.withConnection { connection -> (Int64, String)? in
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
    /// - Parameters:
    ///   - entries: The entries, with their command ids.
    ///   - log: The log's name.
    ///   - appender: A handle from ``makeAppender()`` (any one: the transaction leases its connection
    ///     from the journal's pool).
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
    ///   - appender: A handle from ``makeAppender()``.
    ///   - head: The sequence number the caller's decision saw; nil appends whatever the head.
    /// - Throws: `ActionLogConflict` with the log's head when it is not `head` (nothing appended), or what
    ///   ``append(_:to:using:)`` throws.
    public func append(
        _ entries: [(cid: String?, action: Entry)], to log: String, using appender: Appender, ifHeadIs head: Int64?
    ) async throws -> [Appended] {
        let texts = try entries.map { try Self.encode($0.action) }
        let expected = head
        return try await pool.transaction(logger: logger) { connection in
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

    /// A handle for ``append(_:to:using:)``. Appends lease a connection from the pool for each transaction,
    /// so one appender may be used by any number of concurrent appends.
    public func makeAppender() -> Appender { Appender() }

    /// The actions of `log` after sequence number `seq`, at most `limit` of them, in order.
    ///
    /// - Throws: What the database answers, or a decoding error for an action that is not `Entry`.
    public func records(of log: String, after seq: Int64, limit: Int = 1_000) async throws -> [Record] {
        let rows = try await pool.withConnection { connection in
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
        try await pool.withConnection { connection in
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
        try await pool.withConnection { connection in
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
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                "SELECT seq FROM \(unescaped: self.snapshots) WHERE log = \(log) ORDER BY seq", logger: self.logger)
            var seqs: [Int64] = []
            for try await seq in rows.decode(Int64.self) { seqs.append(seq) }
            return seqs
        }
    }

    /// The channel's notifications, on a connection of their own, for as long as the stream is iterated.
    ///
    /// The stream starts with ``Event/listening`` once the `LISTEN` is in place. The connection is asked
    /// `SELECT 1` every ``PostgresJournalOptions/keepAliveInterval``; when the answer does not come within
    /// ``PostgresJournalOptions/timeout`` (a database that stopped answering without closing the
    /// connection) the connection is closed. When the connection is lost, closed by the database or by
    /// that check, the stream reports ``Event/lost(_:)`` and connects again (after 0.1 s, doubling to 2 s
    /// while it fails, each wait drawn between half and all of that), then reports ``Event/listening``
    /// again: read what was appended meanwhile from the table. The connection names itself
    /// ``listeningName`` to the database. Ending the iteration closes the connection.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        var configuration = configuration
        configuration.options.additionalStartupParameters.removeAll { $0.0 == "application_name" }
        configuration.options.additionalStartupParameters.append(("application_name", listeningName))
        let logger = logger, channel = channel, interval = options.keepAliveInterval, timeout = options.timeout
        let task = Task { [configuration] in
            let firstBackoff = RetryBackoff(first: .milliseconds(100), cap: .seconds(2))
            var backoff = firstBackoff
            while !Task.isCancelled {
                // Why the keep-alive closed the connection, if it did.
                let silence = LostReason()
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration, id: ConnectionIDs.next(), logger: logger)
                    let keepAlive = Task {
                        while !Task.isCancelled {
                            try await Task.sleep(for: interval)
                            do {
                                try await within(
                                    timeout, else: PostgresJournalError("no answer to SELECT 1 within \(timeout)", isTimeout: true),
                                    onTimeout: {}
                                ) {
                                    for try await _ in try await connection.query("SELECT 1", logger: logger) {}
                                }
                            } catch {
                                if Task.isCancelled { return }
                                silence.text.withLock { $0 = "the listening connection failed its keep-alive: \(PostgresFailure.describe(error))" }
                                // Fails the notifications' iteration below, which makes the connection again.
                                connection.close().whenComplete { _ in }
                                return
                            }
                        }
                    }
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
                        keepAlive.cancel()
                        try? await connection.close()
                        continuation.yield(.lost(silence.text.withLock { $0 } ?? "the notifications ended"))
                    } catch {
                        keepAlive.cancel()
                        try? await connection.close()
                        throw error
                    }
                } catch {
                    if Task.isCancelled { break }
                    continuation.yield(.lost(silence.text.withLock { $0 } ?? String(describing: error)))
                }
                try? await Task.sleep(for: backoff.next())
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Closes the pool's connections and ends its task; uses of the journal afterwards throw. A stream of
    /// ``events()`` has a connection of its own, closed when its iteration ends.
    public func close() async { await pool.close() }

    /// Runs `body` in a transaction on a connection of its own, not the pool's, closed afterwards: what
    /// ``prepare()`` does, so that each attempt of ``prepare(waiting:)`` reports at once why it could not
    /// connect (the pool keeps trying on its own).
    private func alone<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let configuration = configuration, logger = logger, timeout = options.timeout
        let used = UsedConnection()
        return try await within(
            timeout, else: PostgresJournalError("the database did not answer within \(timeout)", isTimeout: true),
            onTimeout: { used.connection.withLock { $0 }?.close().whenComplete { _ in } }
        ) {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: ConnectionIDs.next(), logger: logger)
            used.connection.withLock { $0 = connection }
            do {
                let result = try await connection.withTransaction(logger: logger) { try await body($0) }
                try? await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
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

    /// A handle for appends (see ``PostgresJournal/makeAppender()``). It holds no connection: each append
    /// leases one from the journal's pool for its transaction.
    public final class Appender: Sendable {
        init() {}

        /// Does nothing: an appender holds no connection (the journal's ``PostgresJournal/close()`` closes
        /// the pool). Kept for code written when each appender had a connection of its own.
        public func close() async {}
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

#endif
