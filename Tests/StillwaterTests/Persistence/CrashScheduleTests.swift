import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

extension PersistenceTests {
    /// A FileJournal on a ``SimulatedDisk``, crashed at every operation of a workload, with flushes that
    /// fail and a disk that fills, over many seeded schedules. `CRASH_SCHEDULES` in the environment sets
    /// how many (`.ci/run` asks for more).
    @Suite("FileJournal crash schedules")
    struct CrashScheduleTests {
        static let directory = "/simulated/journal"

        /// What a workload got acknowledged, the batch it was syncing when it stopped, and what it saw
        /// go wrong in the journal's own answers.
        struct Outcome {
            var acknowledged: [TallyAction] = []
            var unacknowledged: [TallyAction] = []
            var violations: [String] = []
        }

        /// Appends batches of one to three actions, syncs each, snapshots now and then, until the disk
        /// crashes or the workload ends. After a failed write or flush the journal must refuse writes
        /// (``JournalError/Kind/stopped``) and write nothing more, and a reload must hold exactly the
        /// acknowledged records; the workload goes on from there.
        static func workload(_ journal: TallyJournal, _ disk: SimulatedDisk, seed: UInt64) -> Outcome {
            var random = SeededRandom(seed: seed)
            var outcome = Outcome()
            var version: Int
            do {
                let contents = try journal.load()
                version = contents.version
            } catch {
                return outcome
            }
            for step in 0..<12 {
                if disk.crashed { break }
                let batch = (0..<Int.random(in: 1...3, using: &random)).map { index -> TallyAction in
                    sampleActions[(step * 3 + index + Int(seed % 5)) % sampleActions.count]
                }
                do {
                    for (offset, action) in batch.enumerated() {
                        try journal.append(action, version: version + offset + 1)
                    }
                    outcome.unacknowledged = batch
                    try journal.sync()
                    outcome.acknowledged += batch
                    outcome.unacknowledged = []
                    version += batch.count
                    if step % 4 == 3 {
                        try journal.writeSnapshot(liveState(outcome.acknowledged), version: version)
                    }
                } catch {
                    if disk.crashed { break }
                    outcome.violations += checkStopped(journal, disk, next: outcome.acknowledged.count + 1)
                    // Reopened in this process: what followed the last completed flush is cut.
                    guard let reloaded = try? journal.load() else { break }
                    outcome.unacknowledged = []
                    version = reloaded.version
                    if reloaded.version != outcome.acknowledged.count || reloaded.replayed(onto: Tally()) != liveState(outcome.acknowledged) {
                        outcome.violations.append(
                            "reopened after a failure at version \(reloaded.version), with \(outcome.acknowledged.count) acknowledged")
                        break
                    }
                }
            }
            return outcome
        }

        /// Checks that `journal`, after a failed write or flush, refuses every write as stopped and that
        /// the disk sees no write, flush, rename, truncation or deletion meanwhile; returns what failed.
        static func checkStopped(_ journal: TallyJournal, _ disk: SimulatedDisk, next version: Int) -> [String] {
            let operations = disk.operations
            var violations: [String] = []
            func expectStopped(_ what: String, _ body: () throws -> Void) {
                do {
                    try body()
                    violations.append("\(what) after a failed write was not refused")
                } catch let error as JournalError where error.kind == .stopped {
                } catch {
                    violations.append("\(what) after a failed write threw \(error), not stopped")
                }
            }
            expectStopped("append(_:version:)") { try journal.append(.increment, version: version) }
            expectStopped("sync()") { try journal.sync() }
            expectStopped("writeSnapshot(_:version:)") { try journal.writeSnapshot(Tally(), version: 0) }
            if disk.operations != operations {
                violations.append("a stopped journal made \(disk.operations - operations) operations on the disk")
            }
            return violations
        }

        /// Runs one schedule; returns a description of what went wrong, or `nil`, and whether it crashed.
        static func run(seed: UInt64, crashAt: Int?, failSyncAt: Int?, full: Range<Int>) -> (failure: String?, crashed: Bool) {
            let disk = SimulatedDisk(directory: directory, seed: seed)
            disk.schedule(crashAt: crashAt, failSyncAt: failSyncAt, full: full)
            return (check(disk, seed: seed), disk.crashedBeforeRestart)
        }

        /// Runs the workload on `disk`, restarts it, and checks what loads.
        static func check(_ disk: SimulatedDisk, seed: UInt64) -> String? {
            let outcome: Outcome
            do {
                let journal = try TallyJournal(directory: directory, system: disk.system)
                outcome = workload(journal, disk, seed: seed)
            } catch {
                outcome = Outcome()
            }
            if let violation = outcome.violations.first { return violation }
            disk.restart()
            let contents: JournalContents<Tally, TallyAction>
            do {
                let journal = try TallyJournal(directory: directory, system: disk.system)
                contents = try journal.load()
                // And it goes on: one more record, loaded back.
                try journal.append(.increment, version: contents.version + 1)
                try journal.sync()
                let again = try journal.load()
                guard again.version == contents.version + 1 else { return "an append after the restart did not load back" }
            } catch {
                return "load after the crash threw: \(error)"
            }
            let state = contents.replayed(onto: Tally())
            let acknowledged = liveState(outcome.acknowledged)
            let withBatch = liveState(outcome.acknowledged + outcome.unacknowledged)
            guard state == acknowledged || state == withBatch,
                  contents.version == outcome.acknowledged.count || contents.version == outcome.acknowledged.count + outcome.unacknowledged.count
            else {
                return "after the crash the journal holds version \(contents.version) (\(state)); acknowledged \(outcome.acknowledged.count), in flight \(outcome.unacknowledged.count)"
            }
            return nil
        }

        static var scheduleCount: Int {
            ProcessInfo.processInfo.environment["CRASH_SCHEDULES"].flatMap(Int.init) ?? 3_000
        }

        @Test("after a crash at any operation, a failed flush or a full disk, every acknowledged record is loaded once and no batch half")
        func crashSchedules() async throws {
            // Two minutes of work on a thread of its own: on the concurrency pool's thread it would hold one of
            // the machine's two, and the suite's async tests would wait behind it past their time limits.
            let (operations, crashPoints, failures) = try await onOwnThread { try Self.runSchedules() }
            print("crash schedules: \(Self.scheduleCount) run, \(crashPoints) of them crashed (at each of \(operations) operations), \(failures.count) failed")
            #expect(operations > 50)
            #expect(crashPoints > Self.scheduleCount / 2)
            #expect(failures.isEmpty, "\(failures.prefix(5))")
        }

        @Test("after a failed flush at any point nothing more is written, writes are refused, and a reopen and a restart hold exactly the acknowledged records")
        func failedFlushSchedules() async throws {
            let failures = try await onOwnThread { try Self.runFailedFlushSchedules() }
            #expect(failures.isEmpty, "\(failures.prefix(5))")
        }

        /// Fails the flush at each operation of the workload in turn (only flushes can fail; the others
        /// run as scheduled), with no crash or a crash a few operations later (in the reopen, or in the
        /// writes after it): the workload checks the stop and the reopen; then the disk restarts and the
        /// journal must load what was acknowledged, plus at most the batch in flight.
        static func runFailedFlushSchedules() throws -> [String] {
            let dry = SimulatedDisk(directory: Self.directory, seed: 0)
            _ = Self.workload(try TallyJournal(directory: Self.directory, system: dry.system), dry, seed: 0)
            var failures: [String] = []
            var failedFlushes = 0
            for failSyncAt in 1...dry.operations {
                for (seed, crashAfter): (UInt64, Int?) in [(0, nil), (7, nil), (3, 4), (5, 9), (11, 14)] {
                    let disk = SimulatedDisk(directory: Self.directory, seed: seed)
                    disk.schedule(crashAt: crashAfter.map { failSyncAt + $0 }, failSyncAt: failSyncAt, full: 0..<0)
                    if let failure = check(disk, seed: seed) {
                        failures.append("flush failed at \(failSyncAt), crash \(crashAfter.map { "\($0) later" } ?? "none"), seed \(seed): \(failure)")
                    }
                    if disk.failedSyncs > 0 { failedFlushes += 1 }
                }
            }
            if failedFlushes == 0 { failures.append("no schedule failed a flush") }
            return failures
        }

        /// Runs every schedule: the workload's operation count, how many schedules crashed, and each failure.
        static func runSchedules() throws -> (operations: Int, crashPoints: Int, failures: [String]) {
            // How many operations the workload makes without faults: the crash points to try.
            let dry = SimulatedDisk(directory: Self.directory, seed: 0)
            _ = Self.workload(try TallyJournal(directory: Self.directory, system: dry.system), dry, seed: 0)
            let operations = dry.operations

            var failures: [String] = []
            var crashPoints = 0
            for schedule in 0..<Self.scheduleCount {
                var random = SeededRandom(seed: UInt64(schedule) &* 0x9E37)
                let seed = UInt64(schedule)
                let crashAt = schedule % (operations + 5) + 1
                let failSyncAt = Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 1...operations, using: &random) : nil
                let fullStart = Int.random(in: 1...operations, using: &random)
                let full = Int.random(in: 0..<4, using: &random) == 0 ? fullStart..<(fullStart + Int.random(in: 1...8, using: &random)) : 0..<0
                let (failure, crashed) = Self.run(seed: seed, crashAt: crashAt, failSyncAt: failSyncAt, full: full)
                if crashed { crashPoints += 1 }
                if let failure {
                    failures.append("schedule \(schedule) (crash at \(crashAt), failed flush at \(failSyncAt.map(String.init) ?? "none"), full \(full)): \(failure)")
                }
            }
            return (operations, crashPoints, failures)
        }
    }
}

/// Runs `body` on a new thread and returns what it returns: for long synchronous work in an async test, so it
/// does not hold one of the concurrency pool's threads.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
