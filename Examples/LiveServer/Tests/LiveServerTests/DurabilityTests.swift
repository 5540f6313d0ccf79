import Foundation
import LiveServerCore
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

@Suite("Durability: boards in their journals")
struct DurabilityTests {
    /// A board hub over the file journal in `folder`.
    static func open(
        _ folder: String, snapshotEvery: Int = 1_000, warnings: Locked<[String]>? = nil,
        journal keep: (BoardJournal) -> Void = { _ in }
    ) async throws -> LiveHub<BoardService> {
        let journal = try BoardJournal(directory: folder)
        keep(journal)
        var options = ServerOptions()
        options.snapshotEvery = snapshotEvery
        return try await LiveHub.open(
            BoardService(team: "alpha", access: LiveTokenTable(tokens: [:])), log: journal,
            initial: Board(title: "Durable", texts: ["first"]), options: options.liveOptions,
            warn: { warning in warnings?.withLock { $0.append(warning) } })
    }

    @Test("a board reopened from its journal is the board it was: items, versions, identity and command ids",
          arguments: [1_000, 7])
    func reopen(snapshotEvery: Int) async throws {
        try await withDataFolder { folder in
            var expected: Board
            var stream: String
            weak var released: BoardJournal?
            do {
                let board = try await Self.open(folder, snapshotEvery: snapshotEvery) { released = $0 }
                stream = board.stream
                for number in 0..<40 {
                    let outcome = await board.perform(.add(text: "item \(number)"), cid: "cmd-\(number)", as: .member("alpha"))
                    guard case .applied = outcome else { throw TestFailure("\(outcome)") }
                }
                _ = await board.perform(.toggle(id: "i3"), cid: "cmd-toggle", as: .member("alpha"))
                _ = await board.perform(.move(id: "i5", to: 0), as: .member("alpha"))
                _ = await board.perform(.setTitle("Renamed"), as: .member("alpha"))
                // A refused command is not journaled.
                let refused = await board.perform(.delete(id: "i999"), as: .member("alpha"))
                #expect(refused == .rejected("no item with id \"i999\""))
                expected = board.state.value
            }
            // A hub nobody holds is freed, with its journal (which lets go of the folder's lock), once
            // its writer, which answers before it goes idle, is done.
            try await eventually("the journal was freed") { released == nil }
            // Reopened without a close: as after a crash, the journal's tail is replayed.
            weak var second: BoardJournal?
            do {
                let reopened = try await Self.open(folder, snapshotEvery: snapshotEvery) { second = $0 }
                #expect(reopened.state.value == expected)
                #expect(reopened.stream == stream)
                let retried = await reopened.perform(.add(text: "item 3"), cid: "cmd-3", as: .member("alpha"))
                #expect(retried == .duplicate(version: 4))
                #expect(reopened.state.value == expected)
                await reopened.close()
                expected = reopened.state.value
            }
            try await eventually("the journal was freed") { second == nil }
            // After a close (a snapshot), the same again.
            let third = try await Self.open(folder, snapshotEvery: snapshotEvery)
            #expect(third.state.value == expected)
            #expect(third.stream == stream)
        }
    }

    @Test("a torn tail (a record cut short by a crash) is cut back with a warning; every whole record is kept")
    func tornTail() async throws {
        try await withDataFolder { folder in
            var expected: Board
            var version = 0
            weak var released: BoardJournal?
            do {
                let board = try await Self.open(folder) { released = $0 }
                for number in 0..<5 { _ = await board.perform(.add(text: "kept \(number)"), as: .member("alpha")) }
                expected = board.state.value
                version = board.version
            }
            try await eventually("the journal was freed") { released == nil }
            let segments = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".log") }.sorted()
            let last = try #require(segments.last)
            let handle = try #require(FileHandle(forWritingAtPath: folder + "/" + last))
            handle.seekToEndOfFile()
            // The start of a record header that promises more bytes than follow.
            handle.write(Data([0x40, 0, 0, 0, 0x12, 0x34]))
            handle.closeFile()
            let warnings = Locked<[String]>([])
            let reopened = try await Self.open(folder, warnings: warnings)
            #expect(reopened.state.value == expected)
            #expect(warnings.withLock { $0.count } == 1)
            #expect(await reopened.perform(.add(text: "after the cut"), as: .member("alpha")) == .applied(version: version + 1))
        }
    }

    @Test("a clean close after a start that replayed a tail writes a snapshot, so the next start replays nothing")
    func closeSnapshotsReplayedTail() async throws {
        try await withDataFolder { folder in
            weak var released: BoardJournal?
            do {
                // Commands journaled, then no close (a crash): the journal has a tail after its snapshot.
                let board = try await Self.open(folder) { released = $0 }
                for number in 0..<6 { _ = await board.perform(.add(text: "tail \(number)"), as: .member("alpha")) }
            }
            try await eventually("the journal was freed") { released == nil }
            do {
                let journal = try BoardJournal(directory: folder)
                #expect(try journal.load().records.count == 6)
            }
            weak var second: BoardJournal?
            do {
                // Started from the tail, closed at once with no new command.
                let board = try await Self.open(folder) { second = $0 }
                await board.close()
            }
            try await eventually("the journal was freed") { second == nil }
            let contents = try BoardJournal(directory: folder).load()
            #expect(contents.records.isEmpty)
            #expect(contents.snapshot?.version == 6)
        }
    }

    @Test("the commands sent while a sync runs are written together, in order, and answered after it")
    func batching() async throws {
        try await withDataFolder { folder in
            let board = try await Self.open(folder)
            let outcomes = await withTaskGroup(of: LiveOutcome.self) { group in
                for number in 0..<200 { group.addTask { await board.perform(.add(text: "n\(number)"), cid: "c\(number)", as: .member("alpha")) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let versions = outcomes.compactMap { outcome -> Int? in
                if case .applied(let version) = outcome { version } else { nil }
            }
            #expect(versions.sorted() == Array(1...200))
            #expect(board.state.value.items.count == 201)
        }
    }

    @Test("a journal that cannot be written refuses the batch with a retry error and changes nothing; the next command works")
    func journalFailure() async throws {
        struct DiskFull: Error {}
        let journal = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>()
        let board = try await LiveHub.open(
            BoardService(team: "alpha", access: LiveTokenTable(tokens: [:])), log: journal, initial: Board(title: "T", texts: ["a"]))
        let before = board.state.value
        journal.failNextSync(with: DiskFull())
        let refused = await board.perform(.add(text: "lost"), cid: "c1", as: .member("alpha"))
        guard case .unavailable = refused else {
            Issue.record("expected unavailable, got \(refused)")
            return
        }
        #expect(board.state.value == before)
        // The same command, retried with its id, is applied now, once.
        #expect(await board.perform(.add(text: "lost"), cid: "c1", as: .member("alpha")) == .applied(version: 1))
        #expect(await board.perform(.add(text: "lost"), cid: "c1", as: .member("alpha")) == .duplicate(version: 1))
        let reopened = try await LiveHub.open(
            BoardService(team: "alpha", access: LiveTokenTable(tokens: [:])), log: journal, initial: Board(title: "T"))
        #expect(reopened.state.value == board.state.value)
    }
}
