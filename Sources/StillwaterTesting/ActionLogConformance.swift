import Stillwater

/// Checks that an `ActionLog` keeps the rules every log must keep, whatever it is stored in:
/// a file, a database, memory.
///
/// ``run(entry:state:concurrentTasks:appendsPerTask:makeLog:fileID:filePath:line:column:)`` opens logs
/// through your factory, appends, snapshots, reopens and appends from several tasks at once, and checks:
/// - a fresh log is empty, at version 0;
/// - appends get the versions after the head, without gaps, and return only when the records are
///   readable through `records(after:limit:)` and counted by `head()`;
/// - `records(after:limit:)` returns the records after a version, in order, never more than `limit`;
/// - a reopened log holds every acknowledged record and continues from its head;
/// - after a snapshot, a reopened log returns the newest snapshot and the records after it;
/// - appends from several tasks at once each get a contiguous range of versions, the ranges do not
///   overlap and leave no gap, and every entry is in the log exactly once, at the version its append
///   returned, before and after a reopen.
///
/// Each failure is reported through ``reportTestFailure(_:fileID:filePath:line:column:)`` at the place
/// `run` was called, so it fails the Swift Testing or XCTest test that runs it, and is also returned in
/// the ``Report``. An error the log throws is a failure of the check it happened in; the other checks
/// still run. That `append([])` stops the program is not checked: it would stop the test process.
///
/// ```swift
/// import Foundation
/// struct Add: Action, Codable, Equatable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let base = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
/// defer { try? FileManager.default.removeItem(atPath: base) }
/// let report = await ActionLogConformance.run(
///     entry: { Add(amount: $0) }, state: { $0 * 10 },
///     makeLog: { name in try FileJournal<Int, Add>(directory: base + "/" + name) })
/// print(report.failures.isEmpty, report.checks > 0)
/// // Prints "true true"
/// ```
public enum ActionLogConformance {
    /// What a run found.
    public struct Report: Sendable, Equatable {
        /// How many expectations were checked.
        public var checks: Int
        /// One line per expectation that failed, naming the check (as `[check] what was wrong`).
        public var failures: [String]
    }

    /// Runs every check on logs opened by `makeLog`, reports each failure to the running test, and
    /// returns what was found.
    ///
    /// - Parameters:
    ///   - entry: The entry to append for a number; different numbers must give different entries.
    ///   - state: A state for a snapshot taken at a version; different versions must give different
    ///     states.
    ///   - concurrentTasks: How many tasks append at once in the concurrency check.
    ///   - appendsPerTask: How many appends (of one to three entries each) each of those tasks makes.
    ///   - makeLog: Opens the log called `name`, not yet opened with `open()`. Each check uses a name of
    ///     its own (`empty`, `versions`, `snapshots`, `concurrent`), which must name an empty log the
    ///     first time; the same name again must open the same storage, as a restarted program would.
    ///     The suite releases every log it made before it asks for the same name again. Map the names
    ///     into storage that is new for this run (a new temporary directory, a new database schema), so
    ///     runs do not see each other's records.
    ///   - fileID: Where failures are reported; the caller's place unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    /// - Returns: The number of expectations checked and the failures.
    @discardableResult
    public static func run<Log: ActionLog>(
        entry: @escaping @Sendable (Int) -> Log.Entry,
        state: @escaping @Sendable (Int) -> Log.State,
        concurrentTasks: Int = 8,
        appendsPerTask: Int = 20,
        makeLog: @escaping @Sendable (_ name: String) async throws -> Log,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) async -> Report where Log.Entry: Equatable, Log.State: Equatable {
        precondition(concurrentTasks > 0, "ActionLogConformance.run: concurrentTasks must be at least 1; got \(concurrentTasks)")
        precondition(appendsPerTask > 0, "ActionLogConformance.run: appendsPerTask must be at least 1; got \(appendsPerTask)")
        let suite = ConformanceChecks(entry: entry, state: state, makeLog: makeLog)
        var report = Report(checks: 0, failures: [])
        for check in [
            ("empty", suite.empty), ("versions", suite.versions), ("snapshots", suite.snapshots),
            ("concurrent", { try await suite.concurrent(&$0, tasks: concurrentTasks, appends: appendsPerTask) }),
        ] as [(String, (inout Checker) async throws -> Void)] {
            var checker = Checker(name: check.0)
            do {
                try await check.1(&checker)
            } catch {
                checker.fail("the log threw: \(error)")
            }
            report.checks += checker.checks
            report.failures += checker.failures
        }
        for failure in report.failures {
            reportTestFailure(
                "ActionLogConformance \(failure)", fileID: fileID, filePath: filePath, line: line, column: column)
        }
        return report
    }
}

/// The expectations of one check, with the check's name on each failure.
struct Checker {
    let name: String
    var checks = 0
    var failures: [String] = []

    /// Counts one expectation; when `holds` is false, records `message` as a failure.
    mutating func expect(_ holds: Bool, _ message: @autoclosure () -> String) {
        checks += 1
        if !holds { failures.append("[\(name)] \(message())") }
    }

    /// Records a failure that is not an expectation (an error the log threw).
    mutating func fail(_ message: String) {
        checks += 1
        failures.append("[\(name)] \(message)")
    }
}

/// The checks of ``ActionLogConformance``, over one factory.
struct ConformanceChecks<Log: ActionLog> where Log.Entry: Equatable, Log.State: Equatable {
    let entry: @Sendable (Int) -> Log.Entry
    let state: @Sendable (Int) -> Log.State
    let makeLog: @Sendable (String) async throws -> Log

    /// Opens the log `name` and runs `body` with it and what `open()` found; the log is released when
    /// `body` returns, so the same name can be opened again.
    func withLog<Result>(
        _ name: String, _ body: (Log, ActionLogContents<Log.State, Log.Entry>) async throws -> Result
    ) async throws -> Result {
        let log = try await makeLog(name)
        let contents = try await log.open()
        return try await body(log, contents)
    }

    /// The records 1 through `count`, as `entry` makes them from the numbers `numbers`.
    func expected(_ numbers: [Int], from first: Int = 1) -> [ActionLogRecord<Log.Entry>] {
        numbers.enumerated().map { ActionLogRecord(version: first + $0.offset, entry: entry($0.element)) }
    }

    func describe(_ records: [ActionLogRecord<Log.Entry>]) -> String {
        "versions \(records.map(\.version))"
    }

    /// A log never written to is empty at version 0.
    func empty(_ checker: inout Checker) async throws {
        try await withLog("empty") { log, contents in
            checker.expect(contents.snapshot == nil, "open() of a new log found a snapshot at version \(contents.snapshot?.version ?? 0)")
            checker.expect(contents.records.isEmpty, "open() of a new log found \(contents.records.count) records")
            checker.expect(contents.version == 0, "open() of a new log reported version \(contents.version); expected 0")
            let head = try await log.head()
            checker.expect(head == 0, "head() of a new log is \(head); expected 0")
            let records = try await log.records(after: 0, limit: 10)
            checker.expect(records.isEmpty, "records(after: 0, limit: 10) of a new log returned \(records.count) records")
        }
    }

    /// Versions follow the head without gaps, are read back in order, and survive a reopen.
    func versions(_ checker: inout Checker) async throws {
        try await withLog("versions") { log, _ in
            for (numbers, range) in [([1, 2, 3], 1...3), ([4], 4...4), ([5, 6], 5...6)] {
                let got = try await log.append(numbers.map(entry))
                checker.expect(got == range, "append of \(numbers.count) entries at head \(range.lowerBound - 1) returned \(got); expected \(range)")
            }
            let head = try await log.head()
            checker.expect(head == 6, "head() after appending versions 1 to 6 is \(head); expected 6")
            let all = try await log.records(after: 0, limit: 100)
            checker.expect(all == expected(Array(1...6)), "records(after: 0, limit: 100) returned \(describe(all)), or other entries; expected versions 1 to 6 as appended")
            let page = try await log.records(after: 2, limit: 2)
            checker.expect(page == expected([3, 4], from: 3), "records(after: 2, limit: 2) returned \(describe(page)); expected [3, 4]")
            let none = try await log.records(after: 6, limit: 10)
            checker.expect(none.isEmpty, "records(after: 6, limit: 10) at head 6 returned \(describe(none)); expected none")
        }
        try await withLog("versions") { log, contents in
            checker.expect(contents.records == expected(Array(1...6)), "open() after a reopen found \(describe(contents.records)); expected versions 1 to 6 as appended")
            checker.expect(contents.version == 6, "open() after a reopen reported version \(contents.version); expected 6")
            let head = try await log.head()
            checker.expect(head == 6, "head() after a reopen is \(head); expected 6")
            let got = try await log.append([entry(7)])
            checker.expect(got == 7...7, "the first append after a reopen at head 6 returned \(got); expected 7...7")
        }
        try await withLog("versions") { _, contents in
            checker.expect(contents.records == expected(Array(1...7)), "open() after a second reopen found \(describe(contents.records)); expected versions 1 to 7")
        }
    }

    /// A reopened log returns its newest snapshot and the records after it.
    func snapshots(_ checker: inout Checker) async throws {
        try await withLog("snapshots") { log, _ in
            _ = try await log.append((1...5).map(entry))
            try await log.writeSnapshot(state(3), version: 3)
            let got = try await log.append([entry(6)])
            checker.expect(got == 6...6, "an append after a snapshot at version 3, at head 5, returned \(got); expected 6...6")
            let head = try await log.head()
            checker.expect(head == 6, "head() after the snapshot and one more append is \(head); expected 6")
        }
        try await withLog("snapshots") { log, contents in
            checker.expect(contents.snapshot?.version == 3, "open() after a snapshot at version 3 found a snapshot at \(contents.snapshot.map { String($0.version) } ?? "none")")
            checker.expect(contents.snapshot?.state == state(3), "open() found the snapshot of version 3 with another state than the one written")
            checker.expect(contents.records == expected([4, 5, 6], from: 4), "open() after a snapshot at version 3 found \(describe(contents.records)); expected versions 4 to 6")
            checker.expect(contents.version == 6, "open() after a snapshot at version 3 reported version \(contents.version); expected 6")
            try await log.writeSnapshot(state(6), version: 6)
            let head = try await log.head()
            checker.expect(head == 6, "head() after a snapshot at the head, version 6, is \(head); expected 6")
        }
        try await withLog("snapshots") { log, contents in
            checker.expect(contents.snapshot?.version == 6, "open() after a snapshot at version 6 found a snapshot at \(contents.snapshot.map { String($0.version) } ?? "none")")
            checker.expect(contents.snapshot?.state == state(6), "open() found the snapshot of version 6 with another state than the one written")
            checker.expect(contents.records.isEmpty, "open() after a snapshot at the head found \(describe(contents.records)); expected none")
            checker.expect(contents.version == 6, "open() after a snapshot at version 6 reported version \(contents.version); expected 6")
            let got = try await log.append([entry(7)])
            checker.expect(got == 7...7, "an append after a snapshot at the head, version 6, returned \(got); expected 7...7")
            let after = try await log.records(after: 6, limit: 10)
            checker.expect(after == expected([7], from: 7), "records(after: 6, limit: 10) returned \(describe(after)); expected [7]")
        }
        try await withLog("snapshots") { _, contents in
            checker.expect(contents.snapshot?.version == 6 && contents.records == expected([7], from: 7), "open() after a snapshot at 6 and one append found a snapshot at \(contents.snapshot.map { String($0.version) } ?? "none") and \(describe(contents.records)); expected 6 and [7]")
        }
    }

    /// Appends from several tasks at once get contiguous, disjoint ranges that cover the versions without
    /// a gap, and each entry is in the log once, at the version its append returned.
    func concurrent(_ checker: inout Checker, tasks: Int, appends: Int) async throws {
        /// Task `task`'s append `index`: one to three numbers, unique across tasks.
        func numbers(task: Int, index: Int) -> [Int] {
            let first = (task * appends + index) * 3 + 1
            return Array(first..<(first + 1 + (task + index) % 3))
        }
        let results = try await withLog("concurrent") { log, _ in
            try await withThrowingTaskGroup(of: [(numbers: [Int], range: ClosedRange<Int>)].self) { group in
                for task in 0..<tasks {
                    group.addTask { [entry] in
                        var done: [(numbers: [Int], range: ClosedRange<Int>)] = []
                        for index in 0..<appends {
                            let numbers = numbers(task: task, index: index)
                            done.append((numbers, try await log.append(numbers.map(entry))))
                        }
                        return done
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        var expectedAt: [Int: Int] = [:]   // version -> number
        for (numbers, range) in results {
            checker.expect(range.count == numbers.count, "an append of \(numbers.count) entries returned \(range), \(range.count) versions")
            for (number, version) in zip(numbers, range) {
                checker.expect(expectedAt.updateValue(number, forKey: version) == nil, "version \(version) was returned by two appends")
            }
        }
        let total = results.reduce(0) { $0 + $1.numbers.count }
        checker.expect(Set(expectedAt.keys) == Set(1...total), "the appends' ranges do not cover 1...\(total) exactly: \(results.map(\.range).sorted { $0.lowerBound < $1.lowerBound })")
        let wanted = (1...total).map { ActionLogRecord(version: $0, entry: entry(expectedAt[$0] ?? -1)) }

        try await withLog("concurrent") { log, contents in
            checker.expect(contents.records == wanted, "open() after concurrent appends found \(contents.records.count) records, or not each at the version its append returned; expected \(total)")
            let head = try await log.head()
            checker.expect(head == total, "head() after \(total) entries appended concurrently is \(head)")
            // Read back in pages of 7, so that the limit is checked on every page.
            var read: [ActionLogRecord<Log.Entry>] = []
            while read.count < total + 1 {
                let page = try await log.records(after: read.last?.version ?? 0, limit: 7)
                checker.expect(page.count <= 7, "records(after:limit: 7) returned \(page.count) records")
                if page.isEmpty { break }
                read += page
            }
            checker.expect(read == wanted, "records(after:limit:) read in pages of 7 returned \(read.count) records, or not each at the version its append returned; expected \(total)")
        }
    }
}
