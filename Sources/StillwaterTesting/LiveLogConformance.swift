import Foundation
import Stillwater
import StillwaterLive

/// Checks that a log keeps the live protocol's exactly-once promise: a client's numbered command
/// retried after any number of newer commands from other clients, and after the hub started again, is
/// answered as a duplicate with its first version, never applied twice.
///
/// ``checkLateRetry(others:clients:batch:log:fileID:filePath:line:column:)`` opens a `LiveHub` on
/// your log, records one numbered command, appends `others` commands of `clients` other clients
/// straight to the log (with a snapshot every 100 000 records, as a hub writes them), opens a second hub
/// on the same log, and sends the first command again. Use it on every log a hub may be given (a
/// file, a database, memory).
///
/// ```swift
/// import StillwaterLive
///
/// let log = MemoryJournal<LiveLogState<LiveLogConformance.Count>, LiveEntry<LiveLogConformance.Bump>>()
/// let report = await LiveLogConformance.checkLateRetry(others: 5_000, clients: 10, log: log)
/// print(report.failures, report.checks)
/// // Prints "[] 5"
/// ```
public enum LiveLogConformance {
    /// The state of the check's logs: a count.
    public struct Count: Codable, Sendable, Equatable {
        /// The sum of every bump applied.
        public var value = 0

        /// A count of zero.
        public init() {}
    }

    /// The check's action: adds its amount to the count.
    public struct Bump: Action, Codable, Sendable, Equatable {
        /// What the action adds.
        public var amount: Int

        /// An action that adds `amount`.
        public init(amount: Int) { self.amount = amount }

        /// Adds ``amount`` to the count.
        public func reduce(_ state: inout Count) { state.value += amount }
    }

    /// The log type the check needs: `LiveLogState` of a ``Count``, `LiveEntry` of ``Bump``.
    public typealias Log = any ActionLog<LiveLogState<Count>, LiveEntry<Bump>>

    /// Runs the late-retry check on `log` and reports each failure to the running test.
    ///
    /// - Parameters:
    ///   - others: How many commands of other clients come between the command and its retry.
    ///   - clients: How many other clients send them (each numbers its own, 1, 2, 3, …).
    ///   - batch: How many records each append carries.
    ///   - log: A new, empty log; the check opens it (more than once, as hubs that start again do).
    ///   - fileID: Where failures are reported; the caller's place unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    /// - Returns: The number of expectations checked and the failures.
    /// - Precondition: `others`, `clients` and `batch` are at least 1.
    @discardableResult
    public static func checkLateRetry(
        others: Int = 1_000_000, clients: Int = 1_000, batch: Int = 10_000, log: Log,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async -> ActionLogConformance.Report {
        precondition(others >= 1, "LiveLogConformance.checkLateRetry: others must be at least 1; got \(others)")
        precondition(clients >= 1, "LiveLogConformance.checkLateRetry: clients must be at least 1; got \(clients)")
        precondition(batch >= 1, "LiveLogConformance.checkLateRetry: batch must be at least 1; got \(batch)")
        var report = ActionLogConformance.Report(checks: 0, failures: [])
        func expect(_ condition: Bool, _ failure: @autoclosure () -> String) {
            report.checks += 1
            guard !condition else { return }
            let text = "[late retry] " + failure()
            report.failures.append(text)
            reportTestFailure(text, fileID: fileID, filePath: filePath, line: line, column: column)
        }
        do {
            let first = try await LiveHub.open(Counter(), log: log, initial: Count())
            let ann = first.newClient()
            let applied = await first.perform(1, client: ann, seq: 1, as: "ann")
            expect(applied == .applied(version: 1), "the first command: \(applied), expected applied(version: 1)")
            await first.close()

            var state = try await reopened(log)
            let senders = (0..<clients).map { _ in first.newClient() }
            let time = Int64(Date().timeIntervalSince1970 * 1_000)
            var sent = 0
            while sent < others {
                let entries = (sent..<min(others, sent + batch)).map { index in
                    LiveEntry(client: senders[index % clients], seq: index / clients + 1, time: time, action: Bump(amount: 1))
                }
                _ = try await log.append(entries, ifHeadIs: state.version)
                for entry in entries { entry.reduce(&state) }
                sent += entries.count
                if sent % 100_000 < batch || sent == others { try await log.writeSnapshot(state, version: state.version) }
            }

            let second = try await LiveHub.open(Counter(), log: log, initial: Count())
            let retried = await second.perform(1, client: ann, seq: 1, as: "ann")
            expect(retried == .duplicate(version: 1),
                   "the command retried after \(others) others: \(retried), expected duplicate(version: 1)")
            let next = await second.perform(1, client: ann, seq: 2, as: "ann")
            expect(next == .applied(version: others + 2), "the client's next command: \(next), expected applied(version: \(others + 2))")
            expect(second.state.value.value == others + 2,
                   "the count is \(second.state.value.value), expected \(others + 2): something was applied twice or lost")
            let remembered = second.state.value.value
            expect(remembered == state.state.value + 1, "the hub's state differs from the log's records")
            await second.close()
        } catch {
            expect(false, "the log threw: \(error)")
        }
        return report
    }

    /// The log's state from its newest snapshot and every record after it.
    private static func reopened(_ log: Log) async throws -> LiveLogState<Count> {
        let contents = try await log.open()
        var state = contents.snapshot?.state ?? LiveLogState(state: Count())
        if let snapshot = contents.snapshot { state.version = snapshot.version }
        for record in contents.records { record.entry.reduce(&state) }
        return state
    }

    /// The check's service: every command is a bump.
    private struct Counter: LiveService {
        struct View: LiveView {
            var value: Int
            static let liveFields: [LiveField<View>] = [.value("value", \.value)]
        }

        func view(of state: Count) -> View { View(value: state.value) }
        func decide(_ command: Int, state: Count, identity: String) -> LiveDecision<Bump> { .accept(Bump(amount: command)) }
        func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("anyone") }
    }
}
