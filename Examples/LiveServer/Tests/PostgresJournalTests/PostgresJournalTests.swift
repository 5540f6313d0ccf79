import Foundation
import LiveServerCore
import StillwaterPostgres
import Stillwater
import StillwaterLive
import StillwaterTesting
import Testing

// Against a real PostgreSQL: LIVE_POSTGRES_URL names it (`.ci/run` starts one with Tests/postgres.sh:
// `bash Tests/postgres.sh start /tmp/pg 55432` prints the URL). Without it these tests are skipped.

let databaseURL = ProcessInfo.processInfo.environment["LIVE_POSTGRES_URL"]

/// A journal on the test database with a log name of its own.
func testJournal() throws -> (BoardLog, String) {
    (try BoardLog(url: databaseURL!, prefix: "test"), "log-" + UUID().uuidString.lowercased())
}

func action(_ command: BoardCommand, _ cid: String? = nil) -> (cid: String?, action: BoardAction) {
    (cid, BoardAction(command: command, cid: cid))
}

@Suite("PostgresJournal, on a real PostgreSQL", .enabled(if: databaseURL != nil, "set LIVE_POSTGRES_URL"), .serialized)
struct PostgresJournalTests {
    @Test func appendsGetTheNextNumbersAndReadBackInOrder() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appender = journal.makeAppender()
        let first = try await journal.append([action(.add(text: "a"), "c1"), action(.add(text: "b"))], to: log, using: appender)
        let second = try await journal.append([action(.toggle(id: "i1"), "c2")], to: log, using: appender)
        #expect(first == [.appended(1), .appended(2)])
        #expect(second == [.appended(3)])
        let records = try await journal.records(of: log, after: 0)
        #expect(records.map(\.seq) == [1, 2, 3])
        #expect(records.map(\.cid) == ["c1", nil, "c2"])
        #expect(records.map(\.action.command) == [.add(text: "a"), .add(text: "b"), .toggle(id: "i1")])
        // A gap read: only what comes after, at most `limit`.
        #expect(try await journal.records(of: log, after: 1, limit: 1).map(\.seq) == [2])
        #expect(try await journal.head(of: log) == 3)
        #expect(try await journal.head(of: log + "-none") == 0)
        await appender.close()
        await journal.close()
    }

    @Test func aRetriedCommandIdIsAnsweredFromTheTableNotAppendedAgain() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appender = journal.makeAppender(), other = journal.makeAppender()
        _ = try await journal.append([action(.add(text: "a"), "same")], to: log, using: appender)
        let again = try await journal.append(
            [action(.add(text: "b"), "new"), action(.add(text: "a"), "same"), action(.add(text: "b"), "new")], to: log, using: other)
        #expect(again == [.appended(2), .duplicate(1), .duplicate(2)])
        #expect(try await journal.records(of: log, after: 0).count == 2)
        await appender.close()
        await other.close()
        await journal.close()
    }

    @Test func concurrentAppendersGetOneGaplessOrder() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let appenders = (0..<4).map { _ in journal.makeAppender() }
        let seqs = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for (index, appender) in appenders.enumerated() {
                group.addTask {
                    var seqs: [Int64] = []
                    for round in 0..<25 {
                        let results = try await journal.append(
                            [action(.add(text: "x"), "a\(index)-\(round)"), action(.add(text: "y"))], to: log, using: appender)
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

    @Test func everyAppendIsNotified() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        var events = journal.events().makeAsyncIterator()
        #expect(await events.next() == .listening)
        let appender = journal.makeAppender()
        _ = try await journal.append([action(.add(text: "a")), action(.add(text: "b"))], to: log, using: appender)
        _ = try await journal.append([action(.add(text: "c"))], to: log, using: appender)
        // A batch of duplicates only appends nothing and notifies nothing.
        #expect(await events.next() == .appended(log: log, head: 2))
        #expect(await events.next() == .appended(log: log, head: 3))
        await appender.close()
        await journal.close()
    }

    @Test func aNewLogStartsFromItsInitialStateAndLaterFromItsNewestSnapshot() async throws {
        let (journal, log) = try testJournal()
        try await journal.prepare()
        let board = Board(title: "First", texts: ["one"])
        let (seq, state) = try await journal.open(log, initial: board)
        #expect(seq == 0 && state == board)
        // A second open agrees on the stored first board (another node's initial state is not used).
        let (again, stored) = try await journal.open(log, initial: Board(title: "Other"))
        #expect(again == 0 && stored.id == board.id)
        var later = board
        later.title = "Later"
        try await journal.writeSnapshot(later, seq: 0, of: log)  // already there: the first one stays
        try await journal.writeSnapshot(later, seq: 5, of: log)
        try await journal.writeSnapshot(later, seq: 9, of: log)
        #expect(try await journal.snapshotSeqs(of: log) == [5, 9])
        let (newest, newestState) = try await journal.open(log, initial: board)
        #expect(newest == 9 && newestState.title == "Later")
        await journal.close()
    }

    @Test func aSnapshotPrunesTheActionsMoreThanKeptActionsBehindIt() async throws {
        let journal = try BoardLog(url: databaseURL!, prefix: "test", keptActions: 5)
        let log = "log-" + UUID().uuidString.lowercased()
        try await journal.prepare()
        let board = Board(title: "Pruned")
        _ = try await journal.open(log, initial: board)
        let appender = journal.makeAppender()
        for round in 0..<4 {
            _ = try await journal.append((0..<5).map { action(.add(text: "r\(round)-\($0)"), "c\(round)-\($0)") }, to: log, using: appender)
        }
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(1...20))
        try await journal.writeSnapshot(board, seq: 12, of: log)
        // Kept: the 5 actions up to the snapshot (8 to 12) and everything after it.
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(8...20))
        try await journal.writeSnapshot(board, seq: 20, of: log)
        #expect(try await journal.records(of: log, after: 0).map(\.seq) == Array(16...20))
        #expect(try await journal.head(of: log) == 20)
        // Appends go on from the head.
        #expect(try await journal.append([action(.add(text: "next"))], to: log, using: appender) == [.appended(21)])
        await appender.close()
        await journal.close()
    }

    @Test func aTokenSetOnOneNodeHoldsOnEveryNodeWithinASecond() async throws {
        // Tables of their own, so the nodes serve this test's teams only.
        let prefix = "t" + UUID().uuidString.prefix(8).lowercased()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-teams-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = ClusterNode(log: try BoardLog(url: databaseURL!, prefix: prefix))
        let second = ClusterNode(log: try BoardLog(url: databaseURL!, prefix: prefix))
        let third = ClusterNode(log: try BoardLog(url: databaseURL!, prefix: prefix))
        let a = try await DataFolder(path: folder + "/a").open(try ServerOptions.parse(["--team", "crew=first-token-00000001"]), node: first)
        #expect(a.server.access.allows(team: "crew", token: "first-token-00000001"))
        // The second node is started with another token for the team: it holds on the first node too.
        let b = try await DataFolder(path: folder + "/b").open(try ServerOptions.parse(["--team", "crew=second-token-0000002"]), node: second)
        let changed = ContinuousClock.now
        while !a.server.access.allows(team: "crew", token: "second-token-0000002"), ContinuousClock.now - changed < .seconds(5) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(ContinuousClock.now - changed < .seconds(1))
        #expect(!a.server.access.allows(team: "crew", token: "first-token-00000001"))
        #expect(b.server.access.allows(team: "crew", token: "second-token-0000002"))
        // A node started with no team serves the database's, with their tokens, and makes none.
        let c = try await DataFolder(path: folder + "/c").open(try ServerOptions.parse([]), node: third)
        #expect(c.server.teams.keys.sorted() == ["crew"])
        #expect(c.newTokens.isEmpty)
        #expect(c.server.access.allows(team: "crew", token: "second-token-0000002"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/c/teams.json"))
        for node in [first, second, third] { await node.stop() }
    }

    @Test func aNodeFurtherBehindThanTheKeptActionsStartsAgainFromTheSnapshot() async throws {
        let url = databaseURL!
        let log = "team-" + UUID().uuidString.prefix(8).lowercased()
        let ahead = ClusterNode(log: try BoardLog(url: url, keptActions: 5))
        try await ahead.start()
        // Never started: it hears of no append until its own, so it falls behind.
        let behind = ClusterNode(log: try BoardLog(url: url, keptActions: 5))
        let a = try await ahead.open(log, initial: Board(title: "Far"), snapshotEvery: 10)
        let b = try await behind.open(log, initial: Board(title: "Never used"), snapshotEvery: 10)
        for index in 0..<30 {
            let appended = await a.perform(.add(text: "n\(index)"), id: "n\(index)")
            guard case .applied = appended else {
                Issue.record("append \(index): \(appended)")
                return
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        // The snapshot is stored, then the actions behind it are pruned (two statements): wait for both.
        while ContinuousClock.now < deadline {
            let snapshot = try await ahead.log.snapshotSeqs(of: log).last
            let oldest = try await ahead.log.records(of: log, after: 0).first?.seq
            if snapshot == 30 && oldest == 26 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await ahead.log.records(of: log, after: 0).first?.seq == 26)
        // Its next command finds the actions it lacks pruned: it starts again from the snapshot, then goes on.
        let outcome = await b.perform(.add(text: "from behind"), id: "late")
        #expect(outcome == .applied(version: 31), "\(outcome)")
        while a.store.state.value != b.store.state.value, ContinuousClock.now < deadline + .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(a.store.state.value == b.store.state.value)
        #expect(b.store.state.value.items.count == 31)
        await ahead.stop()
        await behind.stop()
    }

    @Test func eachLogPassesTheSharedActionLogConformanceSuite() async throws {
        struct Add: Codable, Equatable, Sendable {
            var amount: Int
        }
        let journal = try PostgresJournal<Int, Add>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        // Names new to this run, so the suite's logs start empty.
        let run = "conformance-" + UUID().uuidString.lowercased() + "-"
        let report = await ActionLogConformance.run(
            entry: { Add(amount: $0) }, state: { $0 * 10 },
            makeLog: { name in journal.log(named: run + name) })
        #expect(report.checks > 0)
        #expect(report.failures.isEmpty)
        await journal.close()
    }

    @Test func aDatabaseThatCannotBeReachedFailsAtOnce() async throws {
        let journal = try BoardLog(url: "postgres://postgres@127.0.0.1:1/postgres")
        let appender = journal.makeAppender()
        let start = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            _ = try await journal.append([action(.add(text: "a"))], to: "x", using: appender)
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func twoNodesApplyEveryCommandFromTheLogInOneOrder() async throws {
        let url = databaseURL!
        let log = "team-" + UUID().uuidString.prefix(8).lowercased()
        let first = ClusterNode(log: try BoardLog(url: url)), second = ClusterNode(log: try BoardLog(url: url))
        try await first.start()
        try await second.start()
        let board = Board(title: "Both", texts: ["one", "two"])
        let a = try await first.open(log, initial: board, snapshotEvery: 10)
        let b = try await second.open(log, initial: Board(title: "Never used"), snapshotEvery: 10)
        #expect(a.id == b.id)
        // Commands on both nodes at once; one refers to an item the other node adds.
        async let x = a.perform(.add(text: "from a"), id: "a1")
        async let y = b.perform(.rename(id: "i1", text: "renamed on b"), id: "b1")
        let (outcomeA, outcomeB) = await (x, y)
        guard case .applied = outcomeA, case .applied = outcomeB else {
            Issue.record("\(outcomeA) \(outcomeB)")
            return
        }
        for index in 0..<25 { _ = await (index % 2 == 0 ? a : b).perform(.toggle(id: "i2"), id: "t\(index)") }
        // A retried id on the other node is answered, not applied again.
        let retried = await b.perform(.add(text: "from a"), id: "a1")
        guard case .duplicate = retried else {
            Issue.record("a retried id gave \(retried)")
            return
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while a.store.state.value != b.store.state.value, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(a.store.state.value == b.store.state.value)
        #expect(a.store.state.value.items.filter { $0.text == "from a" }.count == 1)
        #expect(a.store.state.value.items.first?.text == "renamed on b")
        #expect(a.store.state.value.items[1].done == true)  // 25 toggles
        // A third node started later begins at the newest snapshot and reads the tail.
        let third = ClusterNode(log: try BoardLog(url: url))
        try await third.start()
        let c = try await third.open(log, initial: Board(title: "Never used"), snapshotEvery: 10)
        #expect(c.store.state.value == a.store.state.value)
        // Snapshots are written after every 10 actions, by whichever node gets there first.
        var snapshots: [Int64] = []
        for _ in 0..<100 {
            snapshots = try await first.log.snapshotSeqs(of: log)
            if snapshots.last ?? 0 >= 20 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(snapshots.last ?? 0 >= 20)
        for node in [first, second, third] { await node.stop() }
    }

    @Test("two board hubs on one PostgresActionLog are replicas: each applies the other's records once advanced, and a cid retried on the other node is a duplicate")
    func boardHubsOnOneLog() async throws {
        let journal = try PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        let name = "hub-" + UUID().uuidString.lowercased()
        let service = BoardService(team: "alpha", access: AccessPolicy(tokens: ["alpha": "alpha-secret-token"]))
        let a = try await LiveHub.open(service, log: journal.log(named: name), initial: Board(title: "Groceries"))
        let b = try await LiveHub.open(service, log: journal.log(named: name), initial: Board(title: "never used"))
        #expect(a.stream == b.stream)
        #expect(await a.perform(.add(text: "milk"), cid: "m1", as: "alpha") == .applied(version: 1))
        // b appends after a's record: its own command is applied in the log's order, a's first.
        #expect(await b.perform(.add(text: "bread"), cid: "b1", as: "alpha") == .applied(version: 2))
        #expect(b.view.items.map(\.text) == ["milk", "bread"])
        // What a NOTIFY tells a node: the log's head.
        a.advance(to: Int(try await journal.head(of: name)))
        await a.settle()
        #expect(a.version == 2)
        #expect(a.view == b.view)
        #expect(await b.perform(.add(text: "milk"), cid: "m1", as: "alpha") == .duplicate(version: 1))
        #expect(await a.perform(.setTitle("Weekend"), cid: "t1", as: "alpha") == .applied(version: 3))
        try await b.refresh()
        #expect(b.view == LiveBoardView(title: "Weekend", items: a.view.items))
        #expect(try await journal.head(of: name) == 3)
        await a.close()
        await b.close()
        await journal.close()
    }

    @Test("replica hubs opened at once on one new log share its stream identity, the one the log keeps")
    func replicaHubsOpenedAtOnce() async throws {
        let journal = try PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        let service = BoardService(team: "alpha", access: AccessPolicy(tokens: ["alpha": "alpha-secret-token"]))
        for round in 0..<10 {
            let name = "hub-\(round)-" + UUID().uuidString.lowercased()
            async let a = openReplicaHub(service, journal: journal, name: name, initial: Board(title: "Groceries"))
            async let b = openReplicaHub(service, journal: journal, name: name, initial: Board(title: "Groceries"))
            let (x, y) = try await (a, b)
            #expect(x.stream == y.stream)
            #expect(try await journal.newestSnapshot(of: name)?.state.stream == x.stream)
            await x.close()
            await y.close()
        }
        await journal.close()
    }
}
