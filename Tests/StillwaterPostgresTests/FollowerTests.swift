#if Postgres
import Foundation
import StillwaterPostgres
import Synchronization
import Testing

/// What a follower was told, in order.
final class Heard: Sendable {
    let heads = Mutex<[Int]>([])
    let valueCalls = Atomic<Int>(0)

    /// Waits up to `limit` for `condition` on the heads heard; says whether it held.
    func wait(within limit: Duration, for condition: ([Int]) -> Bool) async throws -> Bool {
        try await within(limit) { heads.withLock { condition($0) } }
    }
}

/// Waits up to `limit` for `condition`; says whether it held.
func within(_ limit: Duration, _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}

@Suite("PostgresFollower, on a real PostgreSQL",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized)
struct PostgresFollowerTests {
    @Test("a follower is told the head of its log when another journal appends to it")
    func toldOfAppends() async throws {
        let (writer, log) = try testJournal()
        let reader = try NotesJournal(url: databaseURL!, prefix: "test")
        try await writer.prepare()
        let follower = PostgresFollower(journal: reader, pollInterval: .seconds(60))
        let heard = Heard()
        follower.follow(log) { head in heard.heads.withLock { $0.append(head) } }
        let listening = Atomic<Bool>(false)
        follower.onValuesChanged { listening.store(true, ordering: .relaxed) }
        follower.start()
        // Listening calls the values' observer once the LISTEN is in place.
        try #require(try await within(.seconds(20)) { listening.load(ordering: .relaxed) }, "the follower never listened")
        let appender = writer.makeAppender()
        _ = try await writer.append([note("a"), note("b")], to: log, using: appender)
        #expect(try await heard.wait(within: .seconds(20)) { $0.contains(2) })
        _ = try await writer.append([note("c")], to: log, using: appender)
        #expect(try await heard.wait(within: .seconds(20)) { $0.contains(3) })
        follower.stop()
        _ = try await writer.append([note("d")], to: log, using: appender)
        try await Task.sleep(for: .milliseconds(300))
        #expect(!heard.heads.withLock { $0.contains(4) }, "a stopped follower tells nothing")
        await appender.close()
        await writer.close()
        await reader.close()
    }

    @Test("an append whose notification was missed is found by the next poll")
    func pollFindsMissedAppends() async throws {
        let (writer, log) = try testJournal()
        try await writer.prepare()
        let follower = PostgresFollower(journal: writer, pollInterval: .milliseconds(500))
        let listening = Atomic<Bool>(false)
        follower.onValuesChanged { listening.store(true, ordering: .relaxed) }
        follower.start()
        try #require(try await within(.seconds(20)) { listening.load(ordering: .relaxed) }, "the follower never listened")
        let appender = writer.makeAppender()
        _ = try await writer.append([note("a"), note("b"), note("c")], to: log, using: appender)
        try await Task.sleep(for: .milliseconds(100))
        // Followed only now: the append's notification went by with no one following the log, and
        // listening has begun, so only a poll reads the head.
        let heard = Heard()
        follower.follow(log) { head in heard.heads.withLock { $0.append(head) } }
        #expect(try await heard.wait(within: .seconds(20)) { $0.contains(3) })
        follower.stop()
        await appender.close()
        await writer.close()
    }

    @Test("the values' observer is called when another journal sets values")
    func valuesObserved() async throws {
        let (writer, _) = try testJournal()
        let reader = try NotesJournal(url: databaseURL!, prefix: "test")
        try await writer.prepare()
        let follower = PostgresFollower(journal: reader, pollInterval: .seconds(60))
        let key = "follower-" + UUID().uuidString.lowercased()
        let seen = Mutex<String?>(nil)
        follower.onValuesChanged {
            let value = try? await reader.values()[key]
            seen.withLock { $0 = value ?? $0 }
        }
        follower.start()
        try await Task.sleep(for: .milliseconds(300))
        try await writer.setValues([key: "set elsewhere"])
        _ = try await within(.seconds(20)) { seen.withLock { $0 } != nil }
        #expect(seen.withLock { $0 } == "set elsewhere")
        follower.stop()
        await writer.close()
        await reader.close()
    }

    @Test("a database that refuses (an unknown user) is an error at once, not a wait")
    func refusalIsNotWaitedFor() async throws {
        let url = databaseURL!.replacingOccurrences(of: "//postgres@", with: "//no_such_user_here@")
        try #require(url != databaseURL!, "the URL names the user postgres")
        let journal = try NotesJournal(url: url)
        let retries = Mutex<[PostgresRetry]>([])
        do {
            try await journal.prepare(waiting: { retry in retries.withLock { $0.append(retry) } })
            Issue.record("an unknown user was let in")
        } catch {
            #expect(!PostgresFailure.isUnreachable(error))
            #expect(PostgresFailure.describe(error).contains("no_such_user_here"), "\(PostgresFailure.describe(error))")
        }
        #expect(retries.withLock { $0.isEmpty })
        await journal.close()
    }
}

@Suite("Waiting for a PostgreSQL that cannot be reached")
struct PostgresWaitingTests {
    @Test("prepare(waiting:) reports each failed attempt, waiting 0.25 s doubling, each between half and all of it, until cancelled")
    func waitsWithBackoff() async throws {
        // Nothing listens on port 1: every attempt is refused at once.
        let journal = try NotesJournal(url: "postgres://postgres@127.0.0.1:1/postgres")
        let retries = Mutex<[PostgresRetry]>([])
        let waiting = Task {
            try await journal.prepare(waiting: { retry in retries.withLock { $0.append(retry) } })
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while retries.withLock({ $0.count }) < 4, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        let seen = retries.withLock { $0 }
        #expect(seen.count >= 4)
        var ceiling = Duration.milliseconds(250)
        for (index, retry) in seen.enumerated() {
            #expect(retry.attempt == index + 1)
            #expect(retry.reason == "no connection")
            #expect(retry.delay >= ceiling / 2 && retry.delay <= ceiling, "attempt \(retry.attempt): \(retry.delay)")
            ceiling = min(ceiling * 2, .seconds(5))
        }
        #expect(!PostgresFailure.isUnreachable(PostgresJournalError("a journal's own error")))
        #expect("\(seen[0])".hasPrefix("the database cannot be reached (no connection); attempt 1, trying again in 0."))
        await journal.close()
    }

    @Test("a retry's line gives its wait in seconds to one decimal")
    func retryLine() {
        #expect("\(PostgresRetry(attempt: 3, delay: .milliseconds(4_960), reason: "no connection"))"
            == "the database cannot be reached (no connection); attempt 3, trying again in 5.0 s")
        #expect("\(PostgresRetry(attempt: 1, delay: .milliseconds(140), reason: "starting up"))"
            == "the database cannot be reached (starting up); attempt 1, trying again in 0.1 s")
    }
}
#endif
