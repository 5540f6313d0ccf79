import Foundation
import LiveServerCore
import StillwaterPostgres
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import StillwaterTesting
import Testing

// Against a real PostgreSQL: LIVE_POSTGRES_URL names it (`.ci/run` starts one with Tests/postgres.sh:
// `bash Tests/postgres.sh start /tmp/pg 55432` prints the URL). Without it these tests are skipped.
// The journal itself (appends, ids, order, notifications, pruning, conformance) is tested with the
// library (Tests/StillwaterPostgresTests); these are the board's cluster on it.

let databaseURL = ProcessInfo.processInfo.environment["LIVE_POSTGRES_URL"]

/// A board service admitting anyone with alpha's test token.
let clusterService = BoardService(team: "alpha", access: LiveTokenTable(tokens: ["alpha": "alpha-secret-token"]))

@Suite("The board's cluster, on a real PostgreSQL", .enabled(if: databaseURL != nil, "set LIVE_POSTGRES_URL"), .serialized)
struct PostgresJournalTests {
    @Test func aTokenSetOnOneNodeHoldsOnEveryNodeWithinASecond() async throws {
        // Tables of their own, so the nodes serve this test's teams only.
        let prefix = "t" + UUID().uuidString.prefix(8).lowercased()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-teams-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = ClusterNode(log: try ClusterLog(url: databaseURL!, prefix: prefix))
        let second = ClusterNode(log: try ClusterLog(url: databaseURL!, prefix: prefix))
        let third = ClusterNode(log: try ClusterLog(url: databaseURL!, prefix: prefix))
        let a = try await DataFolder(path: folder + "/a").open(try ServerOptions.parse(["--team", "crew=first-token-00000001"]), node: first)
        #expect(a.access.accepts("first-token-00000001", for: "crew"))
        // The second node is started with another token for the team: it holds on the first node too.
        let b = try await DataFolder(path: folder + "/b").open(try ServerOptions.parse(["--team", "crew=second-token-0000002"]), node: second)
        let changed = ContinuousClock.now
        while !a.access.accepts("second-token-0000002", for: "crew"), ContinuousClock.now - changed < .seconds(5) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(ContinuousClock.now - changed < .seconds(1))
        #expect(!a.access.accepts("first-token-00000001", for: "crew"))
        #expect(b.access.accepts("second-token-0000002", for: "crew"))
        // A node started with no team serves the database's, with their tokens, and makes none.
        let c = try await DataFolder(path: folder + "/c").open(try ServerOptions.parse([]), node: third)
        #expect(c.hubs.keys.sorted() == ["crew"])
        #expect(c.newTokens.isEmpty)
        #expect(c.access.accepts("second-token-0000002", for: "crew"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/c/teams.json"))
        for node in [first, second, third] { await node.stop() }
    }

    @Test func aNodeFurtherBehindThanTheKeptActionsStartsAgainFromTheSnapshot() async throws {
        let url = databaseURL!
        let log = "team-" + UUID().uuidString.prefix(8).lowercased()
        let ahead = ClusterNode(log: try ClusterLog(url: url, keptActions: 5))
        try await ahead.start()
        // Never started: it hears of no append until its own, so it falls behind.
        let behind = ClusterNode(log: try ClusterLog(url: url, keptActions: 5))
        let a = try await ahead.open(log, service: clusterService, initial: Board(title: "Far"), options: LiveOptions(snapshotEvery: 10))
        let b = try await behind.open(log, service: clusterService, initial: Board(title: "Never used"), options: LiveOptions(snapshotEvery: 10))
        for index in 0..<30 {
            let appended = await a.perform(.add(text: "n\(index)"), cid: "n\(index)", as: .member("alpha"))
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
        let outcome = await b.perform(.add(text: "from behind"), cid: "late", as: .member("alpha"))
        #expect(outcome == .applied(version: 31), "\(outcome)")
        while a.state.value != b.state.value, ContinuousClock.now < deadline + .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(a.state.value == b.state.value)
        #expect(b.state.value.items.count == 31)
        await a.close()
        await b.close()
        await ahead.stop()
        await behind.stop()
    }

    @Test func twoNodesApplyEveryCommandFromTheLogInOneOrder() async throws {
        let url = databaseURL!
        let log = "team-" + UUID().uuidString.prefix(8).lowercased()
        let first = ClusterNode(log: try ClusterLog(url: url)), second = ClusterNode(log: try ClusterLog(url: url))
        try await first.start()
        try await second.start()
        let board = Board(title: "Both", texts: ["one", "two"])
        let a = try await first.open(log, service: clusterService, initial: board, options: LiveOptions(snapshotEvery: 10))
        let b = try await second.open(log, service: clusterService, initial: Board(title: "Never used"), options: LiveOptions(snapshotEvery: 10))
        #expect(a.stream == b.stream)
        // Commands on both nodes at once; one refers to an item the other node adds.
        async let x = a.perform(.add(text: "from a"), cid: "a1", as: .member("alpha"))
        async let y = b.perform(.rename(id: "i1", text: "renamed on b"), cid: "b1", as: .member("alpha"))
        let (outcomeA, outcomeB) = await (x, y)
        guard case .applied = outcomeA, case .applied = outcomeB else {
            Issue.record("\(outcomeA) \(outcomeB)")
            return
        }
        for index in 0..<25 { _ = await (index % 2 == 0 ? a : b).perform(.toggle(id: "i2"), cid: "t\(index)", as: .member("alpha")) }
        // A retried id on the other node is answered, not applied again.
        let retried = await b.perform(.add(text: "from a"), cid: "a1", as: .member("alpha"))
        guard case .duplicate = retried else {
            Issue.record("a retried id gave \(retried)")
            return
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while a.state.value != b.state.value, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(a.state.value == b.state.value)
        #expect(a.state.value.items.filter { $0.text == "from a" }.count == 1)
        #expect(a.state.value.items.first?.text == "renamed on b")
        #expect(a.state.value.items[1].done == true)  // 25 toggles
        // A third node started later begins at the newest snapshot and reads the tail.
        let third = ClusterNode(log: try ClusterLog(url: url))
        try await third.start()
        let c = try await third.open(log, service: clusterService, initial: Board(title: "Never used"), options: LiveOptions(snapshotEvery: 10))
        #expect(c.state.value == a.state.value)
        // Snapshots are written after every 10 actions, by whichever node gets there first.
        var snapshots: [Int64] = []
        for _ in 0..<100 {
            snapshots = try await first.log.snapshotSeqs(of: log)
            if snapshots.last ?? 0 >= 20 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(snapshots.last ?? 0 >= 20)
        for hub in [a, b, c] { await hub.close() }
        for node in [first, second, third] { await node.stop() }
    }

    @Test("two board hubs on one PostgresActionLog are replicas: each applies the other's records once advanced, and a cid retried on the other node is a duplicate")
    func boardHubsOnOneLog() async throws {
        let journal = try PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        let name = "hub-" + UUID().uuidString.lowercased()
        let service = clusterService
        let a = try await LiveHub.open(service, log: journal.log(named: name), initial: Board(title: "Groceries"))
        let b = try await LiveHub.open(service, log: journal.log(named: name), initial: Board(title: "never used"))
        #expect(a.stream == b.stream)
        #expect(await a.perform(.add(text: "milk"), cid: "m1", as: .member("alpha")) == .applied(version: 1))
        // b appends after a's record: its own command is applied in the log's order, a's first.
        #expect(await b.perform(.add(text: "bread"), cid: "b1", as: .member("alpha")) == .applied(version: 2))
        #expect(b.view(for: .member).items.map(\.text) == ["milk", "bread"])
        // What a NOTIFY tells a node: the log's head.
        a.advance(to: Int(try await journal.head(of: name)))
        await a.settle()
        #expect(a.version == 2)
        #expect(a.view(for: .member) == b.view(for: .member))
        #expect(await b.perform(.add(text: "milk"), cid: "m1", as: .member("alpha")) == .duplicate(version: 1))
        #expect(await a.perform(.setTitle("Weekend"), cid: "t1", as: .member("alpha")) == .applied(version: 3))
        try await b.refresh()
        #expect(b.view(for: .member) == LiveBoardView(title: "Weekend", items: a.view(for: .member).items))
        #expect(try await journal.head(of: name) == 3)
        await a.close()
        await b.close()
        await journal.close()
    }

    @Test("replica hubs opened at once on one new log share its stream identity, the one the log keeps")
    func replicaHubsOpenedAtOnce() async throws {
        let journal = try PostgresJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        for round in 0..<10 {
            let name = "hub-\(round)-" + UUID().uuidString.lowercased()
            async let a = LiveHub.open(clusterService, log: journal.log(named: name), initial: Board(title: "Groceries"))
            async let b = LiveHub.open(clusterService, log: journal.log(named: name), initial: Board(title: "Groceries"))
            let (x, y) = try await (a, b)
            #expect(x.stream == y.stream)
            #expect(try await journal.newestSnapshot(of: name)?.state.stream == x.stream)
            await x.close()
            await y.close()
        }
        await journal.close()
    }
}
