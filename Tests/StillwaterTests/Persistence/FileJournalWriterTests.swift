import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

extension PersistenceTests {
    /// The writer thread: fail-stop after a failed flush, group commit, and the thread's life. Each test
    /// runs on a ``SimulatedDisk`` that can fail or hold a flush.
    @Suite("FileJournal writer thread")
    struct FileJournalWriterTests {
        static let directory = "/simulated/writer"

        /// A journal on a fresh simulated disk, opened.
        static func opened(seed: UInt64 = 1) async throws -> (TallyJournal, SimulatedDisk) {
            let disk = SimulatedDisk(directory: directory, seed: seed)
            let journal = try TallyJournal(directory: directory, system: disk.system)
            _ = try await journal.open()
            return (journal, disk)
        }

        /// Waits (polling, up to 10 seconds) until `condition` holds; returns whether it did.
        static func eventually(_ condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while !condition() {
                if ContinuousClock.now > deadline { return false }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return true
        }

        /// The kind of the `JournalError` `body` throws, or `nil` when it returns.
        static func thrownKind(_ body: () async throws -> Void) async -> JournalError.Kind? {
            do {
                try await body()
                return nil
            } catch let error as JournalError {
                return error.kind
            } catch {
                return nil
            }
        }

        @Test("after a failed flush every write is refused, as stopped, and nothing more reaches the disk; reads still work")
        func failedFlushStops() async throws {
            let (journal, disk) = try await Self.opened()
            #expect(try await journal.append([.increment, .add(2)]) == 1...2)
            disk.failNextSync()
            #expect(await Self.thrownKind { _ = try await journal.append([.add(5)]) } == .unwritable)

            let operations = disk.operations
            #expect(await Self.thrownKind { _ = try await journal.append([.add(7)]) } == .stopped)
            #expect(await Self.thrownKind { try journal.append(.add(7), version: 3) } == .stopped)
            #expect(await Self.thrownKind { try journal.sync() } == .stopped)
            #expect(await Self.thrownKind { try journal.writeSnapshot(liveState([.increment]), version: 1) } == .stopped)
            #expect(await Self.thrownKind { try await (journal as any ActionLog<Tally, TallyAction>).writeSnapshot(Tally(), version: 0) } == .stopped)
            #expect(disk.operations == operations, "a stopped journal wrote, flushed or renamed something")

            #expect(try await journal.head() == 2)
            #expect(try await journal.records(after: 0, limit: 10).map(\.entry) == [.increment, .add(2)])
        }

        @Test("a reopen after a failed flush cuts what followed the last completed flush, keeps every acknowledged record, and writes again")
        func reopenAfterFailedFlush() async throws {
            let (journal, disk) = try await Self.opened()
            _ = try await journal.append([.increment])
            _ = try await journal.append([.add(2)])
            disk.failNextSync()
            #expect(await Self.thrownKind { _ = try await journal.append([.add(100), .add(200)]) } == .unwritable)

            // The failed batch was written whole, commit mark included: only the journal knows its flush failed.
            let contents = try await journal.open()
            #expect(contents.records.map(\.entry) == [.increment, .add(2)])
            #expect(contents.version == 2)
            #expect(contents.warnings.count == 1)
            #expect(contents.warnings.first?.contains("after the last completed flush") == true, "\(contents.warnings)")
            #expect(disk.names.contains { $0.contains(".torn-") })

            #expect(try await journal.append([.add(3)]) == 3...3)
            disk.restart()
            let restarted = try TallyJournal(directory: Self.directory, system: disk.system)
            #expect(try restarted.load().records.map(\.action) == [.increment, .add(2), .add(3)])
        }

        @Test("the synchronous calls stop too, and load() reopens")
        func synchronousStop() async throws {
            let (journal, disk) = try await Self.opened()
            try journal.append(.increment, version: 1)
            try journal.sync()
            try journal.append(.add(4), version: 2)
            disk.failNextSync()
            #expect(await Self.thrownKind { try journal.sync() } == .unwritable)
            #expect(await Self.thrownKind { try journal.append(.add(4), version: 2) } == .stopped)
            let contents = try journal.load()
            #expect(contents.records.map(\.action) == [.increment])
            try journal.append(.add(4), version: 2)
            try journal.sync()
            #expect(try journal.load().version == 2)
        }

        @Test("appends queued behind a flush that fails are refused as stopped, none acknowledged")
        func queuedBehindFailure() async throws {
            let (journal, disk) = try await Self.opened()
            disk.holdNextSync()
            disk.failNextSync()
            let first = Task { await Self.thrownKind { _ = try await journal.append([.increment]) } }
            #expect(await Self.eventually { disk.holdingSync })
            let queued = (0..<4).map { index in
                Task { await Self.thrownKind { _ = try await journal.append([.add(index)]) } }
            }
            #expect(await Self.eventually { journal.writer.shared.withLock { $0.queue.waiting } == 4 })
            disk.releaseSync()
            #expect(await first.value == .unwritable)
            for task in queued { #expect(await task.value == .stopped) }
            #expect(try await journal.open().version == 0)
        }

        @Test("concurrent appends share flushes: each gets its own versions, in arrival order, after the flush that covers it")
        func groupCommit() async throws {
            let (journal, disk) = try await Self.opened()
            let syncsBefore = disk.fileSyncs
            disk.holdNextSync()
            let first = Task { try await journal.append([.append("first")]) }
            #expect(await Self.eventually { disk.holdingSync })
            var waiting: [Task<ClosedRange<Int>, any Error>] = []
            for index in 0..<9 {
                // One at a time, so that the order they arrive in is known.
                waiting.append(Task { try await journal.append([.add(index), .add(index)]) })
                #expect(await Self.eventually { journal.writer.shared.withLock { $0.queue.waiting } == index + 1 })
            }
            disk.releaseSync()
            #expect(try await first.value == 1...1)
            for (index, task) in waiting.enumerated() {
                #expect(try await task.value == (2 + 2 * index)...(3 + 2 * index))
            }
            // The first append's flush, then one for the nine that queued behind it.
            #expect(disk.fileSyncs - syncsBefore == 2)
            let records = try await journal.records(after: 0, limit: 100)
            #expect(records.map(\.version) == Array(1...19))
            #expect(records.map(\.entry) == [.append("first")] + (0..<9).flatMap { [TallyAction.add($0), .add($0)] })
        }

        @Test("many concurrent appenders get distinct contiguous ranges covering every version, with fewer flushes than appends")
        func concurrentAppenders() async throws {
            let (journal, disk) = try await Self.opened()
            let syncsBefore = disk.fileSyncs
            disk.holdNextSync()
            let ranges = try await withThrowingTaskGroup(of: ClosedRange<Int>.self) { group in
                for index in 0..<100 {
                    group.addTask { try await journal.append(Array(repeating: TallyAction.add(index), count: 1 + index % 3)) }
                }
                #expect(await Self.eventually { disk.holdingSync })
                disk.releaseSync()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let versions = ranges.flatMap { Array($0) }.sorted()
            #expect(versions == Array(1...versions.count))
            #expect(versions.count == (0..<100).reduce(0) { $0 + 1 + $1 % 3 })
            #expect(disk.fileSyncs - syncsBefore < 100)
            #expect(try await journal.head() == versions.count)
        }

        @Test("writes and flushes run on the journal's own thread, not on the caller's or the cooperative pool's")
        func ownThread() async throws {
            let (journal, disk) = try await Self.opened()
            _ = try await journal.append([.increment])
            try await (journal as any ActionLog<Tally, TallyAction>).writeSnapshot(liveState([.increment]), version: 1)
            try journal.append(.add(1), version: 2)
            try journal.sync()
            let writer = journal.writer.thread.load(ordering: .relaxed)
            #expect(writer != 0)
            #expect(disk.writerThreads == [writer])
            #expect(writer != currentThread())
        }

        @Test("the writer thread ends when the journal is freed, and the directory can be opened again")
        func threadEnds() async throws {
            let disk = SimulatedDisk(directory: Self.directory, seed: 3)
            weak var writer: JournalWriter?
            do {
                let journal = try TallyJournal(directory: Self.directory, system: disk.system)
                writer = journal.writer
                _ = try await journal.open()
                _ = try await journal.append([.increment])
            }
            // The thread holds the writer until it returns; the journal's deinit waited for it to end.
            #expect(await Self.eventually { writer == nil })
            let again = try TallyJournal(directory: Self.directory, system: disk.system)
            #expect(try again.load().version == 1)
        }

        @Test("with the journaling middleware, a failed flush refuses every later action until load() reopens the journal; then actions go on at the next version")
        func middlewareAfterFailure() async throws {
            let (journal, disk) = try await Self.opened()
            let errors = Shared<[JournalError.Kind]>([])
            let store = Store(Tally(), middleware: [
                .journaling(to: journal, startingAfter: 0, onError: { errors.value.append(($0 as? JournalError)?.kind ?? .corrupt) }),
            ])
            store.dispatch(TallyAction.add(1))
            disk.failNextSync()
            store.dispatch(TallyAction.add(100))
            store.dispatch(TallyAction.add(1_000))
            #expect(errors.value == [.unwritable, .stopped])
            #expect(store.state.value.count == 1)
            #expect(try journal.load().version == 1)
            store.dispatch(TallyAction.add(2))
            #expect(store.state.value.count == 3)
            #expect(try journal.load().records.map(\.action) == [.add(1), .add(2)])
        }

        @Test("a journal on a real directory flushes with either choice of JournalFlush and keeps it")
        func flushChoices() throws {
            for flush in JournalFlush.allCases {
                try withJournalDirectory { directory in
                    do {
                        let journal = try TallyJournal(directory: directory, flush: flush)
                        #expect(journal.flush == flush)
                        _ = try journal.load()
                        try append([.increment, .add(3)], to: journal, after: 0)
                        try journal.writeSnapshot(liveState([.increment, .add(3)]), version: 2)
                    }
                    #expect(try TallyJournal(directory: directory).load().replayed(onto: Tally()) == liveState([.increment, .add(3)]))
                }
            }
        }

        @Test("the state machine takes the appends next to each other as one batch, jobs alone, and refuses writes after a failure")
        func queueMachine() {
            var queue = JournalWriteQueue<Int, String>()
            #expect(queue.next() == .sleep)
            #expect(queue.submit(.append(1)) == .queued(wake: true))
            #expect(queue.submit(.append(2)) == .queued(wake: false))
            #expect(queue.submit(.job("snapshot", runsWhenStopped: false)) == .queued(wake: false))
            #expect(queue.submit(.append(3)) == .queued(wake: false))
            #expect(queue.next() == .commit([1, 2]))
            #expect(queue.next() == .run("snapshot"))
            #expect(queue.submit(.job("read", runsWhenStopped: true)) == .queued(wake: false))
            #expect(queue.submit(.job("snapshot", runsWhenStopped: false)) == .queued(wake: false))
            let stop = JournalError(.stopped, path: "/x", reason: "stopped")
            #expect(queue.failed(stop).count == 2)  // the append 3 and the snapshot; the read stays
            #expect(queue.submit(.append(4)) == .refused(stop))
            #expect(queue.next() == .run("read"))
            queue.reopened()
            #expect(queue.submit(.append(5)) == .queued(wake: false))
            #expect(queue.close() == false)
            #expect(queue.next() == .commit([5]))
            #expect(queue.next() == .exit)
        }
    }
}
