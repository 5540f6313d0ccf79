import Foundation
import Stillwater
import StillwaterLive
import StillwaterTesting
import Synchronization
import Testing

@Suite("LiveHub on the package's logs", .timeLimit(.minutes(5)))
struct LiveLogTests {
    @Test("the tests' shared log keeps the rules of every ActionLog")
    func testLogConforms() async {
        let logs = Mutex<[String: TestLog<Int, Int>]>([:])
        let report = await ActionLogConformance.run(entry: { $0 }, state: { $0 * 10 }) { name in
            logs.withLock { logs in
                if let log = logs[name] { return log }
                let log = TestLog<Int, Int>()
                logs[name] = log
                return log
            }
        }
        #expect(report.failures.isEmpty)
    }

    @Test("a cid retried after a restart on a MemoryJournal is a duplicate with its first version")
    func memoryJournalRestart() async throws {
        let journal = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>()
        let first = try await LiveHub.open(BoardService(), log: journal, initial: Board())
        #expect(await first.perform(.add(text: "milk"), cid: "m1", as: "ann") == .applied(version: 1))
        #expect(await first.perform(.add(text: "eggs"), as: "ann") == .applied(version: 2))
        let second = try await LiveHub.open(BoardService(), log: journal, initial: Board())
        #expect(second.stream == first.stream)
        #expect(await second.perform(.add(text: "milk"), cid: "m1", as: "ann") == .duplicate(version: 1))
        #expect(second.view.items.map(\.text) == ["milk", "eggs"])
        #expect(journal.syncCount >= 2)
    }

    @Test("a cid retried after a restart on a FileJournal is a duplicate; the state and stream come back from disk")
    func fileJournalRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stream: String
        do {
            let journal = try FileJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(directory: directory)
            let hub = try await LiveHub.open(BoardService(), log: journal, initial: Board())
            stream = hub.stream
            #expect(await hub.perform(.setTitle("Groceries"), cid: "t1", as: "ann") == .applied(version: 1))
            #expect(await hub.perform(.add(text: "milk"), cid: "m1", as: "ann") == .applied(version: 2))
            await hub.close()
        }
        let journal = try FileJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(directory: directory)
        let hub = try await LiveHub.open(BoardService(), log: journal, initial: Board())
        #expect(hub.stream == stream)
        #expect(hub.version == 2)
        #expect(await hub.perform(.add(text: "milk"), cid: "m1", as: "ann") == .duplicate(version: 2))
        #expect(hub.view == BoardView(title: "Groceries", count: 1, items: [Item(id: "i1", text: "milk")]))
    }
}

@Suite("A numbered command retried after a million others, on the package's logs", .timeLimit(.minutes(10)))
struct LiveLateRetryTests {
    typealias Log = LiveLogConformance.Log

    @Test("on a MemoryJournal")
    func memoryJournal() async {
        let log = MemoryJournal<LiveLogState<LiveLogConformance.Count>, LiveEntry<LiveLogConformance.Bump>>()
        let report = await LiveLogConformance.checkLateRetry(log: log)
        #expect(report.failures.isEmpty && report.checks == 5)
    }

    @Test("on a FileJournal")
    func fileJournal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("late-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try FileJournal<LiveLogState<LiveLogConformance.Count>, LiveEntry<LiveLogConformance.Bump>>(directory: directory)
        let report = await LiveLogConformance.checkLateRetry(log: log)
        #expect(report.failures.isEmpty && report.checks == 5)
    }
}
