#if Postgres
import Logging
import NIOCore
import PostgresNIO
import Stillwater
import Synchronization

/// The pool and timing settings of a ``PostgresJournal``
/// (``PostgresJournal/init(url:prefix:logger:keptActions:options:)``).
///
/// The journal's statements run on connections leased from postgres-nio's pool (`PostgresClient`): at
/// most ``maximumConnections`` at once, at least ``minimumConnections`` kept open. A caller waits for a
/// connection while all are leased; its wait and its statements together take at most ``timeout``, and
/// cancelling the calling task ends its wait for a connection. The journal's listening connection
/// (``PostgresJournal/events()``) is one more, outside the pool.
///
/// ```swift
/// var options = PostgresJournalOptions()
/// options.maximumConnections = 4
/// options.timeout = .seconds(10)
/// let journal = try PostgresJournal<Int, Int>(url: "postgres://app@127.0.0.1/app", options: options)
/// print(journal.options.maximumConnections)
/// // Prints "4"
/// ```
public struct PostgresJournalOptions: Sendable, Equatable {
    /// The most connections the pool opens at once (10 unless set; at least 1). Each append holds one
    /// for its transaction.
    public var maximumConnections: Int
    /// The connections the pool keeps open even when idle (0 unless set; at most ``maximumConnections``).
    public var minimumConnections: Int
    /// How long making one connection may take, TLS included, before it is given up (3 s unless set).
    public var connectTimeout: Duration
    /// How long one use of the database may take: waiting for a pooled connection and running the
    /// statements (5 s unless set). A use that takes longer throws a ``PostgresJournalError`` that
    /// ``PostgresFailure/isUnreachable(_:)`` calls unreachable, and the connection it held, if any, is
    /// closed: a connection the database cut without a word must not hold its caller for ever.
    public var timeout: Duration
    /// How long a connection idle in the pool beyond ``minimumConnections`` stays open (60 s unless set).
    public var idleTimeout: Duration
    /// How often an idle connection, and the listening one, is asked `SELECT 1` to learn whether it still
    /// answers (10 s unless set). The listening connection is closed and made again when the answer does
    /// not come within ``timeout``.
    public var keepAliveInterval: Duration

    /// Settings with the given values; the defaults are those documented on each property.
    public init(
        maximumConnections: Int = 10, minimumConnections: Int = 0, connectTimeout: Duration = .seconds(3),
        timeout: Duration = .seconds(5), idleTimeout: Duration = .seconds(60), keepAliveInterval: Duration = .seconds(10)
    ) {
        self.maximumConnections = maximumConnections
        self.minimumConnections = minimumConnections
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.idleTimeout = idleTimeout
        self.keepAliveInterval = keepAliveInterval
    }

    /// The first setting out of its range, described, or nil.
    func problem() -> String? {
        if maximumConnections < 1 { return "maximumConnections must be at least 1; got \(maximumConnections)" }
        if minimumConnections < 0 || minimumConnections > maximumConnections {
            return "minimumConnections must be 0 to maximumConnections (\(maximumConnections)); got \(minimumConnections)"
        }
        for (name, value) in [("connectTimeout", connectTimeout), ("timeout", timeout), ("idleTimeout", idleTimeout),
                              ("keepAliveInterval", keepAliveInterval)] where value <= .zero {
            return "\(name) must be positive; got \(value)"
        }
        return nil
    }
}

/// ``PostgresJournalOptions`` that cannot be used.
///
/// ```swift
/// do {
///     _ = try PostgresJournal<Int, Int>(
///         url: "postgres://app@127.0.0.1/app", options: PostgresJournalOptions(maximumConnections: 0))
/// } catch {
///     print(error)
/// }
/// // Prints "maximumConnections must be at least 1; got 0"
/// ```
public struct PostgresOptionsError: Error, CustomStringConvertible {
    /// What is wrong, naming the setting.
    public var description: String
}

/// postgres-nio's pool, run by a task of its own from creation until ``close()``, with the journal's
/// timeout on every use.
final class ConnectionPool: Sendable {
    let client: PostgresClient
    private let runner: Task<Void, Never>
    private let timeout: Duration

    init(configuration: PostgresClient.Configuration, timeout: Duration, logger: Logger) {
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.timeout = timeout
        runner = Task { await client.run() }
    }

    /// Runs `body` on a leased connection and gives it back, within the timeout (see
    /// ``PostgresJournalOptions/timeout``). Cancelling the caller ends its wait for a connection with a
    /// `CancellationError`; statements already sent run to their end.
    func withConnection<R: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        let used = UsedConnection()
        let timeout = timeout
        do {
            return try await within(
                timeout, else: PostgresJournalError("the database did not answer within \(timeout)", isTimeout: true),
                onTimeout: {
                    // Closing fails what the connection waits for; the pool forgets it and makes another.
                    used.connection.withLock { $0 }?.close().whenComplete { _ in }
                }
            ) {
                try await self.client.withConnection { connection in
                    used.connection.withLock { $0 = connection }
                    return try await body(connection)
                }
            }
        } catch {
            // The pool reports a cancelled wait in its own words; the caller asked to stop.
            if Task.isCancelled, !(error is PostgresJournalError) { throw CancellationError() }
            throw error
        }
    }

    /// Runs `body` in a transaction on a leased connection (see ``withConnection(_:)``). A conflict the
    /// body throws reaches the caller as itself once the transaction is rolled back, and the connection
    /// goes back to the pool.
    func transaction<R: Sendable>(logger: Logger, _ body: @escaping @Sendable (PostgresConnection) async throws -> R) async throws -> R {
        try await withConnection { connection in
            do {
                return try await connection.withTransaction(logger: logger) { try await body($0) }
            } catch let error as PostgresTransactionError {
                if let conflict = error.closureError as? ActionLogConflict, error.rollbackError == nil { throw conflict }
                throw error
            }
        }
    }

    /// Ends the pool: its connections are closed, and later uses throw.
    func close() async {
        runner.cancel()
        await runner.value
    }

    /// Ends the pool without waiting for it.
    func cancel() { runner.cancel() }
}

/// Runs `work` on a task of its own and returns what it returns — unless `limit` passes first: then
/// `onTimeout` is called, the task is cancelled and `timeoutError` thrown. Cancelling the caller cancels
/// the task (and the caller still gets the task's answer, or the timeout).
///
/// Not a task group: a group waits for all its tasks, and a statement sent on a connection the database
/// has just cut was seen never to finish.
func within<R: Sendable>(
    _ limit: Duration, else timeoutError: @autoclosure () -> any Error, onTimeout: @escaping @Sendable () -> Void,
    _ work: @escaping @Sendable () async throws -> R
) async throws -> R {
    let task = Task { try await work() }
    let failure = timeoutError()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            let answer = Answer(continuation)
            let timer = Task {
                try await Task.sleep(for: limit)
                guard answer.resume(with: .failure(failure)) else { return }
                onTimeout()
                task.cancel()
            }
            Task {
                let result = await task.result
                if answer.resume(with: result) { timer.cancel() }
            }
        }
    } onCancel: {
        task.cancel()
    }
}

/// The connection a use of the pool leased, for closing it when the use takes too long.
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
#endif
