#if Postgres
import Foundation
import NIOSSL
import PostgresNIO
import Synchronization

/// Keeps readers of a ``PostgresJournal``'s logs up to date with what every process appends: replica
/// `LiveHub`s on one database, say, each told the head of its log (`advance(to:)`) as it moves.
///
/// Once started it listens to the journal's channel (``PostgresJournal/events()``) and tells a log's
/// follower the head each notification names. Notifications are not stored: one sent while the listening
/// connection was down is lost. So it also reads every followed log's head when it listens again and
/// every ``pollInterval``: a missed notification or a lost connection costs a read, never an append. A
/// head may be told more than once, or after a higher one; a follower must take it as "the log reaches
/// at least this far" (as `LiveHub.advance(to:)` does).
///
/// ```swift
/// let journal = try PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(url: url)
/// try await journal.prepare(waiting: { print($0) })
/// let follower = PostgresFollower(journal: journal)
/// follower.start()
/// let hub = try await LiveHub.open(service, log: journal.log(named: "alpha"), initial: Board())
/// follower.follow("alpha") { hub.advance(to: $0) }
/// ```
///
/// Cost: one connection for listening, and per ``pollInterval`` one read of each followed log's head.
public final class PostgresFollower<State: Codable & Sendable, Entry: Codable & Sendable>: Sendable {
    /// The journal whose logs are followed.
    public let journal: PostgresJournal<State, Entry>
    /// How often every followed log's head is read when no notification came (2 s unless set).
    public let pollInterval: Duration

    /// Who is told what: each log's follower, the values' observer, and the listening task once started.
    private struct Followers {
        var logs: [String: @Sendable (Int) -> Void] = [:]
        var values: (@Sendable () async -> Void)?
        var task: Task<Void, Never>?
        var stopped = false
    }

    private let followers = Mutex(Followers())

    /// A follower of `journal`'s logs, reading their heads every `pollInterval` besides the notifications.
    ///
    /// - Precondition: `pollInterval` is positive.
    public init(journal: PostgresJournal<State, Entry>, pollInterval: Duration = .seconds(2)) {
        precondition(pollInterval > .zero, "PostgresFollower(pollInterval:) must be positive; got \(pollInterval)")
        self.journal = journal
        self.pollInterval = pollInterval
    }

    /// Tells `advance` the head of `log` (its last sequence number) whenever it may have moved, from now
    /// on; replaces what followed `log` before. `advance` is called on the follower's task, one call at a
    /// time across all logs, never while a lock is held, and must return quickly.
    public func follow(_ log: String, advance: @escaping @Sendable (Int) -> Void) {
        followers.withLock { $0.logs[log] = advance }
    }

    /// Stops telling `log`'s follower anything.
    public func unfollow(_ log: String) {
        followers.withLock { _ = $0.logs.removeValue(forKey: log) }
    }

    /// Calls `observer` whenever the journal's values may have changed
    /// (``PostgresJournal/setValues(_:keepingStored:)``): on each notification of a change, when
    /// listening starts or starts again, and every ``pollInterval``. It reads the values itself
    /// (``PostgresJournal/values()``); it is awaited before the next call. Replaces an earlier observer.
    public func onValuesChanged(_ observer: @escaping @Sendable () async -> Void) {
        followers.withLock { $0.values = observer }
    }

    /// Starts listening and polling, on a task of its own, until ``stop()`` (the task keeps the follower
    /// alive until then); a second call, or one after ``stop()``, does nothing. The journal's tables must
    /// exist (``PostgresJournal/prepare()``).
    public func start() {
        followers.withLock { followers in
            guard followers.task == nil, !followers.stopped else { return }
            followers.task = Task { await self.run() }
        }
    }

    /// Stops listening and polling: no follower is told anything afterwards. The journal stays open.
    public func stop() {
        followers.withLock { followers in
            followers.stopped = true
            followers.task?.cancel()
            followers.task = nil
        }
    }

    /// What the one loop of ``run()`` handles next: a notification, or a poll's turn.
    private enum Round: Sendable {
        case event(PostgresJournal<State, Entry>.Event)
        case poll
    }

    /// Notifications and poll turns go through one stream to one loop, so followers and the values'
    /// observer are told one thing at a time, in the order it came.
    private func run() async {
        let (rounds, feed) = AsyncStream.makeStream(of: Round.self)
        let events = journal.events()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { feed.yield(.event(event)) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.pollInterval)
                    if !Task.isCancelled { feed.yield(.poll) }
                }
            }
            group.addTask {
                for await round in rounds {
                    switch round {
                    case .event(.appended(let log, let head)): self.tell(log, head: Int(head))
                    case .event(.listening), .poll: await self.readAll()
                    case .event(.valuesChanged): await self.valuesObserver()?()
                    case .event(.lost): break
                    }
                }
            }
        }
        feed.finish()
    }

    /// Tells `log`'s follower `head`, unless it was unfollowed or the follower stopped meanwhile.
    private func tell(_ log: String, head: Int) {
        followers.withLock { $0.stopped ? nil : $0.logs[log] }?(head)
    }

    private func valuesObserver() -> (@Sendable () async -> Void)? {
        followers.withLock { $0.stopped ? nil : $0.values }
    }

    /// Reads every followed log's head and tells its follower, then tells the values' observer. A failed
    /// read ends the round (the database is likely away); the next poll or listening tries again.
    private func readAll() async {
        let logs = followers.withLock { $0.stopped ? [] : Array($0.logs.keys) }
        for log in logs {
            let head: Int64
            do {
                head = try await journal.head(of: log)
            } catch {
                journal.logger.warning("the log's head could not be read; the next poll tries again", metadata: [
                    "log": "\(log)", "error": "\(error)",
                ])
                return
            }
            tell(log, head: Int(head))
        }
        await valuesObserver()?()
    }
}

extension PostgresJournal {
    /// Creates the tables unless they exist, as ``prepare()`` does, waiting for a database that cannot
    /// be reached yet (refused, cut, starting up): it tries again after a wait that starts at 0.25 s and
    /// doubles to at most 5 s, each drawn between half and all of that (so processes started together do
    /// not retry in step), and tells `waiting` of each failed attempt. Cancel the calling task to stop
    /// waiting.
    ///
    /// - Parameter waiting: Called once per failed attempt, before its wait.
    /// - Throws: What the database answers when it can be reached but refuses (a wrong user or database,
    ///   a missing permission), or `CancellationError` when cancelled while waiting.
    public func prepare(waiting: (PostgresRetry) -> Void) async throws {
        var backoff = RetryBackoff(first: .milliseconds(250), cap: .seconds(5))
        while true {
            do {
                return try await prepare()
            } catch {
                // Cancelled while connecting: postgres-nio may throw its own error; the caller asked to stop.
                try Task.checkCancellation()
                guard PostgresFailure.isUnreachable(error) else { throw error }
                let delay = backoff.next()
                waiting(PostgresRetry(attempt: backoff.attempts, delay: delay, reason: PostgresFailure.describe(error)))
                try await Task.sleep(for: delay)
            }
        }
    }
}

/// A failed attempt to reach the database, as ``PostgresJournal/prepare(waiting:)`` reports it.
///
/// ```swift
/// let retry = PostgresRetry(attempt: 2, delay: .milliseconds(1_260), reason: "no connection")
/// print(retry)
/// // Prints "the database cannot be reached (no connection); attempt 2, trying again in 1.3 s"
/// ```
public struct PostgresRetry: Sendable, Equatable, CustomStringConvertible {
    /// The attempts that failed so far, this one included (1 for the first).
    public var attempt: Int
    /// The wait before the next attempt.
    public var delay: Duration
    /// Why the database could not be reached, in a few words (``PostgresFailure/describe(_:)``).
    public var reason: String

    /// A report of failed attempt `attempt`, followed by a wait of `delay`.
    public init(attempt: Int, delay: Duration, reason: String) {
        self.attempt = attempt
        self.delay = delay
        self.reason = reason
    }

    /// One line for a log or standard error, with the wait in seconds to one decimal.
    public var description: String {
        let tenths = Int((Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18) * 10 + 0.5)
        return "the database cannot be reached (\(reason)); attempt \(attempt), trying again in \(tenths / 10).\(tenths % 10) s"
    }
}

/// What an error thrown by a ``PostgresJournal`` (or by postgres-nio under it) means to its caller: one
/// line to show, and whether the database could not be reached at all.
public enum PostgresFailure {
    /// The error in one line: "no connection" when the database cannot be reached (refused, closed),
    /// what failed in TLS when the connection's TLS did (a server without it under `sslmode=require`, a
    /// certificate that is not trusted or names another host), the server's message for an error it
    /// reported, the journal's own description for a ``PostgresJournalError``, else the error's kind. At
    /// most 160 characters.
    public static func describe(_ error: any Error) -> String {
        let error = cause(of: error)
        if isPoolGivingUp(error) { return "no connection" }
        guard let error = error as? PSQLError else { return String(String(describing: error).prefix(160)) }
        if let tls = tlsFailure(error) { return String(tls.prefix(160)) }
        if isConnectionLoss(error) { return "no connection" }
        guard error.code == .server else { return "\(error.code)" }
        return String((error.serverInfo?[.message] ?? "the database reported an error").prefix(160))
    }

    /// Whether `error` says the database could not be reached (no connection, a connection cut, no
    /// answer in time, or a server that is starting or shutting down), rather than that it refused the
    /// request: trying again later may succeed. A failed TLS handshake or a server without TLS where
    /// the URL requires it is a refusal.
    public static func isUnreachable(_ error: any Error) -> Bool {
        let error = cause(of: error)
        if let error = error as? PostgresJournalError { return error.isTimeout }
        if isPoolGivingUp(error) { return true }
        guard let error = error as? PSQLError else { return false }
        if tlsFailure(error) != nil { return false }
        // Class 08 (connection exception) and 57P01-57P03 (shutting down, starting up).
        let state = error.code == .server ? error.serverInfo?[.sqlState] ?? "" : ""
        return isConnectionLoss(error) || state.hasPrefix("08") || state.hasPrefix("57P")
    }

    /// What failed in TLS, when `error` is a TLS failure.
    private static func tlsFailure(_ error: PSQLError) -> String? {
        if error.code == .sslUnsupported { return "the server does not offer TLS, which sslmode requires" }
        if error.code == .failedToAddSSLHandler { return "TLS could not be set up" }
        guard let underlying = error.underlying, underlying is NIOSSLError || underlying is NIOSSLExtraError
                || String(reflecting: type(of: underlying)).contains("NIOSSL") else { return nil }
        return "TLS failed: \(underlying)"
    }

    /// Whether `error` is the pool's own refusal after its connection attempts kept failing (postgres-nio
    /// does not re-export its pool's error type, so it is known by its name).
    private static func isPoolGivingUp(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError")
            && String(describing: error).contains("CircuitBreaker")
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
}

/// The waits between attempts to reach the database: `first`, doubling to at most `cap`, each drawn
/// at random between half and all of that.
struct RetryBackoff {
    let first: Duration
    let cap: Duration
    /// The attempts that failed so far (the calls to ``next()``).
    private(set) var attempts = 0

    /// The wait after one more failed attempt.
    mutating func next() -> Duration {
        attempts += 1
        return min(first * (1 << min(attempts - 1, 20)), cap) * Double.random(in: 0.5...1)
    }
}
#endif
