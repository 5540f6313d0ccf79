import Foundation
import StillwaterTesting
import Synchronization
import Testing
@testable import Stillwater

/// Memory journals by name: the same name gives the same journal back, as reopening a directory gives
/// the same files (its `open()` drops what was never made durable, as a restart does).
final class MemoryLogs: Sendable {
    private let logs = Mutex<[String: MemoryJournal<Tally, TallyAction>]>([:])

    func log(_ name: String) -> MemoryJournal<Tally, TallyAction> {
        logs.withLock { logs in
            if let log = logs[name] { return log }
            let log = MemoryJournal<Tally, TallyAction>()
            logs[name] = log
            return log
        }
    }
}

/// A log that breaks one rule on purpose, to show that the conformance suite catches it.
final class BrokenLog: ActionLog {
    enum Fault: String, CaseIterable, Sendable { case forgetsLastOnReopen, ignoresLimit, skipsAVersion }

    let fault: Fault
    let inner: MemoryJournal<Tally, TallyAction>

    init(_ fault: Fault, _ inner: MemoryJournal<Tally, TallyAction>) {
        self.fault = fault
        self.inner = inner
    }

    func open() async throws -> ActionLogContents<Tally, TallyAction> {
        var contents = try await inner.open()
        if fault == .forgetsLastOnReopen, !contents.records.isEmpty {
            contents.records.removeLast()
            contents.version -= 1
        }
        return contents
    }

    func append(_ entries: [TallyAction]) async throws -> ClosedRange<Int> {
        let range = try await inner.append(entries)
        return fault == .skipsAVersion && range.lowerBound == 4 ? 5...(range.upperBound + 1) : range
    }

    func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<TallyAction>] {
        try await inner.records(after: version, limit: fault == .ignoresLimit ? .max : limit)
    }

    func head() async throws -> Int { try await inner.head() }

    func writeSnapshot(_ state: Tally, version: Int) async throws {
        try inner.writeSnapshot(state, version: version)
    }
}

extension PersistenceTests {
    @Suite("ActionLog conformance")
    struct ActionLogTests {
        static let entry: @Sendable (Int) -> TallyAction = { .add($0) }
        static let state: @Sendable (Int) -> Tally = { Tally(count: $0, name: "at \($0)") }

        @Test("FileJournal keeps every ActionLog rule, across reopens of its directory")
        func fileJournal() async throws {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("stillwater-log-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: base) }
            let report = await ActionLogConformance.run(
                entry: Self.entry, state: Self.state,
                makeLog: { name in try TallyJournal(directory: base + "/" + name) })
            #expect(report.failures.isEmpty)
            #expect(report.checks > 40)
        }

        @Test("MemoryJournal keeps every ActionLog rule")
        func memoryJournal() async {
            let logs = MemoryLogs()
            let report = await ActionLogConformance.run(entry: Self.entry, state: Self.state, makeLog: { logs.log($0) })
            #expect(report.failures.isEmpty)
        }

        @Test("the conformance suite reports a log that breaks a rule", arguments: BrokenLog.Fault.allCases)
        func catchesBrokenLog(_ fault: BrokenLog.Fault) async {
            let logs = MemoryLogs()
            var report: ActionLogConformance.Report?
            await withKnownIssue {
                report = await ActionLogConformance.run(
                    entry: Self.entry, state: Self.state, concurrentTasks: 2, appendsPerTask: 5,
                    makeLog: { BrokenLog(fault, logs.log($0)) })
            }
            let failures = report?.failures ?? []
            let expected = switch fault {
            case .forgetsLastOnReopen: "[versions] open() after a reopen found"
            case .ignoresLimit: "[versions] records(after: 2, limit: 2) returned versions [3, 4, 5, 6]"
            case .skipsAVersion: "[versions] append of 1 entries at head 3 returned 5...5; expected 4...4"
            }
            #expect(failures.contains { $0.hasPrefix(expected) }, "\(failures)")
        }

        @Test("appending to a FileJournal continues after the versions the sync API appended, with one flush per append")
        func fileJournalMixesWithSyncAPI() async throws {
            try await withJournalDirectory { directory async throws in
                let journal = try TallyJournal(directory: directory)
                _ = try await journal.open()
                try journal.append(.increment, version: 1)
                try journal.sync()
                let range = try await journal.append([.add(2), .add(3)])
                #expect(range == 2...3)
                #expect(try await journal.records(after: 1, limit: 5).map(\.entry) == [.add(2), .add(3)])
            }
        }

        @Test("a failed append keeps none of its entries and the next one continues from the last durable version")
        func failedAppend() async throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            _ = try await journal.open()
            _ = try await journal.append([.increment])
            journal.failNextSync(with: JournalError(.unwritable, path: "/disk", reason: "no space left on device"))
            await #expect(throws: JournalError.self) { try await journal.append([.add(1), .add(2)]) }
            #expect(try await journal.head() == 1)
            #expect(try await journal.append([.add(3)]) == 2...2)
            #expect(try await journal.records(after: 0, limit: 10).map(\.entry) == [.increment, .add(3)])
        }
    }
}
