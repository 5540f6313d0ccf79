#if Postgres
import Foundation
import Stillwater

extension PostgresJournal {
    /// The log named `name` of this journal, as the library's `ActionLog`: for code written against
    /// `ActionLog` (which one `FileJournal` also serves), and for `ActionLogConformance`.
    ///
    /// Versions are the log's sequence numbers; appends carry no command id (use
    /// ``append(_:to:using:)`` for ids); `writeSnapshot(_:version:)` prunes as ``keptActions`` says.
    public func log(named name: String) -> PostgresActionLog<State, Entry> {
        PostgresActionLog(journal: self, name: name)
    }
}

/// One named log of a ``PostgresJournal``, as an `ActionLog`: many processes may append to it at once,
/// and the database orders their appends.
///
/// Each append leases a connection from the journal's pool for its transaction (a transaction holds its
/// connection until it commits); a conditional append that finds the head moved rolls back and gives the
/// connection back to the pool.
public final class PostgresActionLog<State: Codable & Sendable, Entry: Codable & Sendable>: ActionLog, Sendable {
    /// The journal the log is kept in.
    public let journal: PostgresJournal<State, Entry>
    /// The log's name in the journal's tables.
    public let name: String
    private let appender: PostgresJournal<State, Entry>.Appender

    init(journal: PostgresJournal<State, Entry>, name: String) {
        self.journal = journal
        self.name = name
        appender = journal.makeAppender()
    }

    /// The newest snapshot (none for a new log: nothing is stored by opening) and every record after it.
    ///
    /// - Throws: What the database answers, or a decoding error.
    public func open() async throws -> ActionLogContents<State, Entry> {
        let snapshot = try await journal.newestSnapshot(of: name)
        var after = snapshot?.seq ?? 0
        var records: [ActionLogRecord<Entry>] = []
        while true {
            let page = try await journal.records(of: name, after: after, limit: 1_000)
            guard let last = page.last else { break }
            records += page.map { ActionLogRecord(version: Int($0.seq), entry: $0.action) }
            after = last.seq
        }
        return ActionLogContents(
            snapshot: snapshot.map { JournalSnapshot(version: Int($0.seq), state: $0.state) }, records: records)
    }

    /// Appends `entries` in one transaction at the log's next versions, durable when this returns (the
    /// commit).
    ///
    /// - Throws: What the database answers; then none of them was appended (unless the connection was
    ///   lost during the commit, which cannot tell).
    public func append(_ entries: [Entry]) async throws -> ClosedRange<Int> {
        try await append(entries, ifHeadIs: nil)
    }

    /// Appends `entries` only if the log's head is still `head`, in one transaction that locks the
    /// head: another process's append cannot come between the check and the append.
    ///
    /// - Throws: `ActionLogConflict` with the newer head when another process appended first (nothing
    ///   appended), or what the database answers.
    public func append(_ entries: [Entry], ifHeadIs head: Int) async throws -> ClosedRange<Int> {
        try await append(entries, ifHeadIs: Optional(head))
    }

    private func append(_ entries: [Entry], ifHeadIs head: Int?) async throws -> ClosedRange<Int> {
        precondition(!entries.isEmpty, "PostgresActionLog.append(_:): entries must hold at least one entry; got an empty array")
        let results = try await journal.append(
            entries.map { (cid: nil, action: $0) }, to: name, using: appender, ifHeadIs: head.map(Int64.init))
        return Int(results.first!.seq)...Int(results.last!.seq)
    }

    /// The records after `version`, in order, at most `limit`.
    public func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<Entry>] {
        precondition(limit > 0, "PostgresActionLog.records(after:limit:): limit must be at least 1; got \(limit)")
        return try await journal.records(of: name, after: Int64(version), limit: limit)
            .map { ActionLogRecord(version: Int($0.seq), entry: $0.action) }
    }

    /// The last committed version, every process's appends included.
    public func head() async throws -> Int { Int(try await journal.head(of: name)) }

    /// Stores `state` as the state after `version` (durable on return) and prunes behind it.
    public func writeSnapshot(_ state: State, version: Int) async throws {
        try await journal.writeSnapshot(state, seq: Int64(version), of: name)
    }
}
#endif
