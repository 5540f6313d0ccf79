#if Postgres
import Foundation
import PostgresNIO
import Stillwater
import StillwaterPostgres
import Synchronization
import Testing

/// What a journal's ``PostgresJournal/events()`` reported, in order, recorded by a task of its own.
final class EventRecorder: Sendable {
    private final class Events: Sendable {
        let list = Mutex<[NotesJournal.Event]>([])
    }

    private let recorded = Events()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<NotesJournal.Event>) {
        let recorded = recorded
        task = Task { for await event in stream { recorded.list.withLock { $0.append(event) } } }
    }

    var seen: [NotesJournal.Event] { recorded.list.withLock { $0 } }

    /// Waits up to `limit` for `condition` on the events so far; says whether it held.
    func wait(within limit: Duration, for condition: ([NotesJournal.Event]) -> Bool) async throws -> Bool {
        try await within(limit) { recorded.list.withLock { condition($0) } }
    }

    func stop() { task.cancel() }
}

/// Runs `body` on a connection of the test's own to the test database (not the journal's), closed after.
func withTestConnection<R>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
    let url = URLComponents(string: databaseURL!)!
    let configuration = PostgresConnection.Configuration(
        host: url.host!, port: url.port ?? 5432, username: url.user!, password: url.password,
        database: String(url.path.dropFirst()), tls: .disable)
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "test"))
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

/// Runs `body` while a transaction of the test's own holds `log`'s row in `test_logs` locked (so the
/// journal's appends to it wait), then ends that transaction.
func withLockedLog<R>(_ log: String, _ body: () async throws -> R) async throws -> R {
    try await withTestConnection { holder in
        try await holder.query("BEGIN", logger: Logger(label: "test"))
        try await holder.query("SELECT head FROM test_logs WHERE log = \(log) FOR UPDATE", logger: Logger(label: "test"))
        let result = try await body()
        try await holder.query("ROLLBACK", logger: Logger(label: "test"))
        return result
    }
}

/// The process ids of the database's sessions that gave `name` as their application name.
func backends(named name: String, on connection: PostgresConnection) async throws -> [Int32] {
    let rows = try await connection.query("SELECT pid FROM pg_stat_activity WHERE application_name = \(name)", logger: Logger(label: "test"))
    var pids: [Int32] = []
    for try await pid in rows.decode(Int32.self) { pids.append(pid) }
    return pids
}

/// Whether `events` has a ``PostgresJournal/Event/lost(_:)`` with ``PostgresJournal/Event/listening`` after it.
func listenedAgain(_ events: [NotesJournal.Event]) -> Bool {
    guard let lost = events.firstIndex(where: { if case .lost = $0 { true } else { false } }) else { return false }
    return events[lost...].contains(.listening)
}

@Suite("PostgresJournal's pool and listening connection, on a real PostgreSQL",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized)
struct PostgresPoolTests {
    @Test("a caller waiting for a connection stops waiting when its task is cancelled; the pool goes on")
    func cancelledWait() async throws {
        // One connection: an append blocked on the log's row lock holds it, so a read must wait.
        var options = PostgresJournalOptions(maximumConnections: 1)
        options.timeout = .seconds(20)
        let journal = try NotesJournal(url: databaseURL!, prefix: "test", options: options)
        try await journal.prepare()
        let log = "pool-" + UUID().uuidString.lowercased()
        let appender = journal.makeAppender()
        _ = try await journal.append([note("first")], to: log, using: appender)
        let blocked = try await withLockedLog(log) {
            let blocked = Task { try await journal.append([note("second")], to: log, using: appender) }
            try await Task.sleep(for: .milliseconds(500))
            let waiting = Task { try await journal.head(of: log) }
            try await Task.sleep(for: .milliseconds(500))
            let cancelled = ContinuousClock.now
            waiting.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiting.value }
            #expect(ContinuousClock.now - cancelled < .seconds(2), "the cancelled caller went on waiting")
            return blocked
        }
        #expect(try await blocked.value == [.appended(2)])
        #expect(try await journal.head(of: log) == 2)
        await journal.close()
    }

    @Test("a conditional append on a moved head throws ActionLogConflict and keeps its pooled connection")
    func conflictKeepsConnection() async throws {
        let name = "t-" + UUID().uuidString.prefix(8).lowercased()
        let journal = try NotesJournal(
            url: setting("application_name", to: name, in: databaseURL!), prefix: "test",
            options: PostgresJournalOptions(maximumConnections: 1))
        try await journal.prepare()
        let log = "conflict-" + UUID().uuidString.lowercased()
        let appender = journal.makeAppender()
        _ = try await journal.append([note("a"), note("b")], to: log, using: appender)
        let before = try await withTestConnection { try await backends(named: name, on: $0) }
        #expect(before.count == 1)
        await #expect(throws: ActionLogConflict(head: 2)) {
            _ = try await journal.append([note("late")], to: log, using: appender, ifHeadIs: 1)
        }
        #expect(try await withTestConnection { try await backends(named: name, on: $0) } == before,
                "the connection was dropped after the conflict")
        #expect(try await journal.append([note("c")], to: log, using: appender, ifHeadIs: 2) == [.appended(3)])
        #expect(try await journal.records(of: log, after: 0).map(\.action.text) == ["a", "b", "c"])
        await journal.close()
    }

    @Test("a caller waiting longer than the timeout gets an error that says the database is unreachable")
    func waitTimesOut() async throws {
        let journal = try NotesJournal(url: databaseURL!, prefix: "test", options: PostgresJournalOptions(maximumConnections: 1, timeout: .seconds(1)))
        try await journal.prepare()
        let log = "pool-" + UUID().uuidString.lowercased()
        let appender = journal.makeAppender()
        _ = try await journal.append([note("first")], to: log, using: appender)
        try await withLockedLog(log) {
            let start = ContinuousClock.now
            do {
                _ = try await journal.append([note("second")], to: log, using: appender)
                Issue.record("the append went through a locked row")
            } catch {
                #expect(PostgresFailure.isUnreachable(error), "\(error)")
            }
            #expect(ContinuousClock.now - start < .seconds(4))
        }
        // The connection that timed out was closed; the pool makes another. The database ends the old
        // session (and frees the row lock it took once the test's transaction ended) only when it finds
        // its client gone, or after 2 s idle in its transaction: until then an append may time out.
        let deadline = ContinuousClock.now + .seconds(10)
        var third: [NotesJournal.Appended]?
        while third == nil, ContinuousClock.now < deadline {
            third = try? await journal.append([note("third", "third")], to: log, using: appender)
        }
        #expect(third?.map(\.seq) == [2], "an attempt that timed out in its commit may have appended it: then it is a duplicate")
        await journal.close()
    }

    @Test("a listening connection the database ends is made again, and notifications arrive on the new one")
    func droppedListenConnection() async throws {
        let name = "t-" + UUID().uuidString.prefix(8).lowercased()
        let journal = try NotesJournal(url: setting("application_name", to: name, in: databaseURL!), prefix: "test")
        #expect(journal.listeningName == name + " listen")
        try await journal.prepare()
        let log = "listen-" + UUID().uuidString.lowercased()
        let events = EventRecorder(journal.events())
        defer { events.stop() }
        try #require(try await events.wait(within: .seconds(20)) { $0.contains(.listening) }, "never listened")
        let ended = try await withTestConnection { admin in
            let rows = try await admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(name + " listen")",
                logger: Logger(label: "test"))
            var ended = 0
            for try await done in rows.decode(Bool.self) where done { ended += 1 }
            return ended
        }
        #expect(ended == 1)
        #expect(try await events.wait(within: .seconds(20), for: listenedAgain), "\(events.seen)")
        _ = try await journal.append([note("a")], to: log, using: journal.makeAppender())
        #expect(try await events.wait(within: .seconds(10)) { $0.contains(.appended(log: log, head: 1)) }, "\(events.seen)")
        await journal.close()
    }

    @Test("a listening connection whose server process stops answering is found by the keep-alive and made again")
    func silentListenConnection() async throws {
        let name = "t-" + UUID().uuidString.prefix(8).lowercased()
        var options = PostgresJournalOptions()
        options.keepAliveInterval = .milliseconds(500)
        options.timeout = .seconds(1)
        let journal = try NotesJournal(url: setting("application_name", to: name, in: databaseURL!), prefix: "test", options: options)
        try await journal.prepare()
        let events = EventRecorder(journal.events())
        defer { events.stop() }
        try #require(try await events.wait(within: .seconds(20)) { $0.contains(.listening) }, "never listened")
        let pids = try await withTestConnection { try await backends(named: name + " listen", on: $0) }
        try #require(pids.count == 1)
        // The server process is stopped, not ended: the connection stays open and says nothing, as one
        // behind a dropped network path does. Only the keep-alive can tell.
        try #require(kill(pid_t(pids[0]), SIGSTOP) == 0, "could not stop process \(pids[0]) (the test must run as root)")
        defer { kill(pid_t(pids[0]), SIGCONT) }
        #expect(try await events.wait(within: .seconds(10), for: listenedAgain), "\(events.seen)")
        let lost = events.seen.compactMap { if case .lost(let reason) = $0 { reason } else { nil } }
        #expect(lost.first?.contains("keep-alive") == true, "\(lost)")
        let now = try await withTestConnection { try await backends(named: name + " listen", on: $0) }
        #expect(now.contains { $0 != pids[0] }, "no new listening connection: \(now)")
        kill(pid_t(pids[0]), SIGCONT)
        await journal.close()
    }
}
#endif
