#if Postgres
import Foundation
import Stillwater
import StillwaterLive
import StillwaterPostgres
import StillwaterTesting
import Testing

// Against a real PostgreSQL named by LIVE_POSTGRES_URL (`.ci/run` starts one with
// Examples/LiveServer/Tests/postgres.sh: `bash Examples/LiveServer/Tests/postgres.sh start /tmp/pg 55432`
// prints the URL). Without it every test here is skipped, with that reason.

let databaseURL = ProcessInfo.processInfo.environment["LIVE_POSTGRES_URL"]

/// A note list: the state the tests keep in their logs.
struct Notes: Codable, Equatable, Sendable {
    var title: String
    var texts: [String] = []
}

/// One change to a note list.
struct Note: Codable, Equatable, Sendable {
    var text: String
}

typealias NotesJournal = PostgresJournal<Notes, Note>

/// A journal on the test database, and a log name new to this test.
func testJournal(keptActions: Int = 10_000) throws -> (NotesJournal, String) {
    (try NotesJournal(url: databaseURL!, prefix: "test", keptActions: keptActions), "log-" + UUID().uuidString.lowercased())
}

/// Runs the shared ActionLog conformance suite on logs of a journal on `url`, with names new to this run.
func checkConformance(url: String, prefix: String) async throws {
    struct Add: Codable, Equatable, Sendable {
        var amount: Int
    }
    let journal = try PostgresJournal<Int, Add>(url: url, prefix: prefix)
    try await journal.prepare()
    let run = "conformance-" + UUID().uuidString.lowercased() + "-"
    let report = await ActionLogConformance.run(
        entry: { Add(amount: $0) }, state: { $0 * 10 },
        makeLog: { name in journal.log(named: run + name) })
    #expect(report.checks > 0)
    #expect(report.failures.isEmpty, "\(report.failures)")
    await journal.close()
}

func note(_ text: String, _ cid: String? = nil) -> (cid: String?, action: Note) {
    (cid, Note(text: text))
}

@Suite("PostgresJournal, on a real PostgreSQL",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized)
struct PostgresJournalTests {
    @Test("appends get the next numbers and read back in order")
    func appendsInOrder() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appender = journal.makeAppender()
        let first = try await journal.append([note("a", "c1"), note("b")], to: log, using: appender)
        let second = try await journal.append([note("c", "c2")], to: log, using: appender)
        #expect(first == [.appended(1), .appended(2)])
        #expect(second == [.appended(3)])
        let records = try await journal.records(of: log, after: 0)
        #expect(records.map(\.seq) == [1, 2, 3])
        #expect(records.map(\.cid) == ["c1", nil, "c2"])
        #expect(records.map(\.action.text) == ["a", "b", "c"])
        // A gap read: only what comes after, at most `limit`.
        #expect(try await journal.records(of: log, after: 1, limit: 1).map(\.seq) == [2])
        #expect(try await journal.head(of: log) == 3)
        #expect(try await journal.head(of: log + "-none") == 0)
        await appender.close()
        await journal.close()
    }

    @Test("a retried command id is answered from the table, not appended again")
    func retriedCommandID() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appender = journal.makeAppender(), other = journal.makeAppender()
        _ = try await journal.append([note("a", "same")], to: log, using: appender)
        let again = try await journal.append([note("b", "new"), note("a", "same"), note("b", "new")], to: log, using: other)
        #expect(again == [.appended(2), .duplicate(1), .duplicate(2)])
        #expect(try await journal.records(of: log, after: 0).count == 2)
        await appender.close()
        await other.close()
        await journal.close()
    }

    @Test("concurrent appenders get one gapless order")
    func concurrentAppenders() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appenders = (0..<4).map { _ in journal.makeAppender() }
        let seqs = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for (index, appender) in appenders.enumerated() {
                group.addTask {
                    var seqs: [Int64] = []
                    for round in 0..<25 {
                        let results = try await journal.append([note("x", "a\(index)-\(round)"), note("y")], to: log, using: appender)
                        seqs += results.map(\.seq)
                    }
                    return seqs
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(seqs.sorted() == Array(1...200))
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(1...200))
        for appender in appenders { await appender.close() }
        await journal.close()
    }

    @Test("every append is notified, once per batch")
    func appendsNotified() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        var events = journal.events().makeAsyncIterator()
        #expect(await events.next() == .listening)
        let appender = journal.makeAppender()
        _ = try await journal.append([note("a"), note("b")], to: log, using: appender)
        _ = try await journal.append([note("c")], to: log, using: appender)
        #expect(await events.next() == .appended(log: log, head: 2))
        #expect(await events.next() == .appended(log: log, head: 3))
        await appender.close()
        await journal.close()
    }

    @Test("a new log starts from its initial state, and later from its newest snapshot")
    func snapshots() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let first = Notes(title: "First", texts: ["one"])
        let (seq, state) = try await journal.open(log, initial: first)
        #expect(seq == 0 && state == first)
        // A second open agrees on the stored first state (another node's initial state is not used).
        let (again, stored) = try await journal.open(log, initial: Notes(title: "Other"))
        #expect(again == 0 && stored == first)
        var later = first
        later.title = "Later"
        try await journal.writeSnapshot(later, seq: 0, of: log)  // already there: the first one stays
        try await journal.writeSnapshot(later, seq: 5, of: log)
        try await journal.writeSnapshot(later, seq: 9, of: log)
        #expect(try await journal.snapshotSeqs(of: log) == [5, 9])
        let (newest, newestState) = try await journal.open(log, initial: first)
        #expect(newest == 9 && newestState.title == "Later")
        await journal.close()
    }

    @Test("a snapshot prunes the actions more than keptActions behind it")
    func pruning() async throws {
        let (journal, log) = try testJournal(keptActions: 5)
        try await journal.prepare()
        let notes = Notes(title: "Pruned")
        _ = try await journal.open(log, initial: notes)
        let appender = journal.makeAppender()
        for round in 0..<4 {
            _ = try await journal.append((0..<5).map { note("r\(round)-\($0)", "c\(round)-\($0)") }, to: log, using: appender)
        }
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(1...20))
        try await journal.writeSnapshot(notes, seq: 12, of: log)
        // Kept: the 5 actions up to the snapshot (8 to 12) and everything after it.
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(8...20))
        try await journal.writeSnapshot(notes, seq: 20, of: log)
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(16...20))
        #expect(try await journal.head(of: log) == 20)
        // Appends go on from the head.
        #expect(try await journal.append([note("next")], to: log, using: appender) == [.appended(21)])
        await appender.close()
        await journal.close()
    }

    @Test("values set by one journal are read by another on the same tables")
    func sharedValues() async throws {
        let prefix = "t" + UUID().uuidString.prefix(8).lowercased()
        let one = try NotesJournal(url: databaseURL!, prefix: prefix), two = try NotesJournal(url: databaseURL!, prefix: prefix)
        try await one.prepare()
        try await one.setValues(["alpha": "1", "beta": "2"])
        #expect(try await two.values() == ["alpha": "1", "beta": "2"])
        // Keeping what is stored: a value already there is not replaced.
        try await two.setValues(["alpha": "changed", "gamma": "3"], keepingStored: true)
        #expect(try await one.values()["alpha"] == "1")
        #expect(try await one.values()["gamma"] == "3")
        await one.close()
        await two.close()
    }

    @Test("each log passes the shared ActionLog conformance suite")
    func conformance() async throws {
        try await checkConformance(url: databaseURL!, prefix: "test")
    }

    @Test("a database that cannot be reached fails within the timeout, as unreachable")
    func unreachable() async throws {
        let journal = try NotesJournal(url: "postgres://postgres@127.0.0.1:1/postgres", options: PostgresJournalOptions(timeout: .seconds(1)))
        let appender = journal.makeAppender()
        let start = ContinuousClock.now
        do {
            _ = try await journal.append([note("a")], to: "x", using: appender)
            Issue.record("appended to nothing")
        } catch {
            #expect(PostgresFailure.isUnreachable(error), "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(3))
        await journal.close()
    }
}

@Suite("PostgresJournal URLs")
struct PostgresURLTests {
    @Test("a URL that is not postgres:// is refused with a message naming it")
    func badURL() {
        #expect(throws: PostgresURLError.self) { try NotesJournal(url: "mysql://root@localhost/db") }
    }
}
#endif
