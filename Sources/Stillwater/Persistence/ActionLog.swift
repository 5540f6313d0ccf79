/// One record of an ``ActionLog``: an entry and the version it made.
///
/// Versions count the entries of one log: the first makes version 1, the next version 2, and so on, with
/// no gaps. Version 0 is the state before any entry.
public struct ActionLogRecord<Entry: Sendable>: Sendable {
    /// The version this entry made: one more than the version before it.
    public var version: Int
    /// The entry.
    public var entry: Entry

    /// Creates the record of `entry`, which made `version`.
    public init(version: Int, entry: Entry) {
        self.version = version
        self.entry = entry
    }
}

extension ActionLogRecord: Equatable where Entry: Equatable {}

/// What opening an ``ActionLog`` found: the newest usable snapshot, every record after it, the head
/// version, and warnings for whoever runs the program.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let contents = ActionLogContents<Int, Add>(
///     snapshot: JournalSnapshot(version: 2, state: 10),
///     records: [ActionLogRecord(version: 3, entry: Add(amount: 5))])
/// print(contents.version, contents.replayed(onto: 0))
/// // Prints "3 15"
/// ```
public struct ActionLogContents<State: Sendable, Entry: Sendable>: Sendable {
    /// The newest snapshot that could be used, or `nil` when the log has none.
    public var snapshot: JournalSnapshot<State>?
    /// Every record after the snapshot (after version 0 without one), oldest first, with consecutive
    /// versions.
    public var records: [ActionLogRecord<Entry>]
    /// The head: the last record's version, else the snapshot's, else 0. The next append gets this plus
    /// one (for a log shared by many writers, unless another writer appended first).
    public var version: Int
    /// One line per thing the log repaired or passed over while opening (a torn tail cut off, for
    /// instance). Nothing is printed: show them to whoever runs the program.
    public var warnings: [String]

    /// Creates what a log found (for a log of your own).
    ///
    /// - Parameters:
    ///   - snapshot: The newest usable snapshot, if any.
    ///   - records: The records after it, oldest first; their versions must follow on from the
    ///     snapshot's (or from 0) without gaps, which this initializer does not check.
    ///   - version: The head; by default the last record's version, else the snapshot's, else 0.
    ///   - warnings: One line per repair or oddity met while opening.
    public init(
        snapshot: JournalSnapshot<State>? = nil, records: [ActionLogRecord<Entry>] = [], version: Int? = nil,
        warnings: [String] = []
    ) {
        self.snapshot = snapshot
        self.records = records
        self.version = version ?? records.last?.version ?? snapshot?.version ?? 0
        self.warnings = warnings
    }
}

extension ActionLogContents: Equatable where State: Equatable, Entry: Equatable {}

extension ActionLogContents {
    /// What an ``ActionJournal``'s load found, as a log's contents.
    init(_ contents: JournalContents<State, Entry>) {
        self.init(
            snapshot: contents.snapshot,
            records: contents.records.map { ActionLogRecord(version: $0.version, entry: $0.action) },
            version: contents.version, warnings: contents.warnings)
    }
}

extension ActionLogContents where Entry: Action, Entry.State == State {
    /// The snapshot's state (or `initialState` without a snapshot) with every record reduced onto it, in
    /// order, without effects (as ``JournalContents/replayed(onto:)``).
    ///
    /// - Complexity: One reduce per record, in place on one state.
    public func replayed(onto initialState: State) -> State {
        JournalReplay.reduce(records.lazy.map(\.entry), onto: snapshot?.state ?? initialState)
    }
}

/// A durable, ordered log of entries with snapshots, for one node or many.
///
/// A log kept in files (``FileJournal``) has one writer, this process, and the next version is its own
/// to give. A log kept in a database shared by several nodes orders their concurrent appends itself. Both
/// keep the same rules, and `ActionLogConformance` (in StillwaterTesting) checks them for any log:
///
/// 1. ``open()`` first, once, before anything else: it verifies what the log holds and reads the newest
///    usable snapshot and the records after it.
/// 2. ``append(_:)`` gives its entries the next versions (head + 1, head + 2, …) and returns once they
///    are durable. Only then is an entry *acknowledged*: safe to report as done to whoever sent it.
/// 3. Now and then ``writeSnapshot(_:version:)``, so the next open has fewer records to read.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let log = MemoryJournal<Int, Add>()
/// _ = try await log.open()
/// let versions = try await log.append([Add(amount: 2), Add(amount: 3)])
/// print(versions, try await log.head())
/// // Prints "1...2 2"
/// ```
///
/// ``ActionJournal`` is the synchronous protocol ``Store/restoring(from:initialState:dependencies:middleware:onEffectError:)``
/// and ``Middleware/journaling(to:startingAfter:snapshotEvery:onError:)`` use, where the caller
/// chooses each version; ``FileJournal`` and ``MemoryJournal`` conform to both. Use one protocol or the
/// other on a given log, not both at once.
public protocol ActionLog<State, Entry>: AnyObject, Sendable {
    /// The type of state the log's snapshots hold.
    associatedtype State: Codable & Sendable
    /// The type of entry the log's records hold.
    associatedtype Entry: Codable & Sendable

    /// Verifies what the log holds and reads the newest usable snapshot and every record after it.
    ///
    /// Called once, before the other methods. A log that can repair what a crash leaves behind (bytes
    /// of an append that never returned) does so here and says so in ``ActionLogContents/warnings``;
    /// damage to anything that was acknowledged is thrown, never repaired by dropping it.
    func open() async throws -> ActionLogContents<State, Entry>

    /// Appends `entries` in order and returns once they are durable (acknowledged), with the versions
    /// the log gave them: head + 1 through head + `entries.count`.
    ///
    /// When it throws, none of `entries` is visible to this log's readers; the next append continues
    /// from the last durable version, or, for a log that stops after a failed write or flush (as
    /// ``FileJournal`` does), is refused until the log is opened again. Whether a crash right after such a throw can leave them durable
    /// depends on where the failure was (a database commit whose reply was lost, a flush that failed
    /// after the disk took the bytes); it leaves all of them or none, never some.
    ///
    /// - Parameter entries: At least one entry; an empty array is a programming error and stops the
    ///   program with a message naming `entries`.
    func append(_ entries: [Entry]) async throws -> ClosedRange<Int>

    /// Appends `entries` only if the log's head is still `head`: the entries were decided on the state
    /// at that version, and nobody may have appended in between.
    ///
    /// A log shared by several writers checks the head and appends in one atomic step (a database
    /// transaction that locks the head). The default implementation, for a log with one writer (this
    /// process), compares ``head()`` and then calls ``append(_:)``: right only when no other writer
    /// appends to the log at the same time.
    ///
    /// - Parameters:
    ///   - entries: At least one entry, as for ``append(_:)``.
    ///   - head: The version the caller's decision saw; the entries get `head + 1` onwards.
    /// - Returns: `head + 1 ... head + entries.count`, once durable.
    /// - Throws: ``ActionLogConflict`` with the log's newer head when another append came first (nothing
    ///   was appended: catch up and decide again), or what ``append(_:)`` throws.
    func append(_ entries: [Entry], ifHeadIs head: Int) async throws -> ClosedRange<Int>

    /// The durable records after `version`, oldest first, at most `limit` of them.
    ///
    /// A replica catches up with others' appends this way; a log with one writer returns its own. A log
    /// may have let go of records that a snapshot covers (see ``writeSnapshot(_:version:)``): then the
    /// first record returned is later than `version + 1`, and the caller starts from the snapshot
    /// instead.
    func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<Entry>]

    /// The last durable version: the newest acknowledged record's (others' appends included, for a
    /// shared log), or the newest snapshot's when that is later, or 0.
    func head() async throws -> Int

    /// Stores `state` as the state after `version`, durably when this returns.
    ///
    /// The log may then let go of the records the snapshot covers, keeping what its retention setting
    /// asks for. `version` must be one the log has reached.
    func writeSnapshot(_ state: State, version: Int) async throws
}

extension ActionLog {
    /// Appends `entries` if ``head()`` is `head`, for a log with one writer: the check and the append are
    /// two steps, so a log that several processes append to must implement this itself, atomically.
    ///
    /// - Throws: ``ActionLogConflict`` when the head is not `head` (nothing appended), or what
    ///   ``head()`` and ``append(_:)`` throw.
    public func append(_ entries: [Entry], ifHeadIs head: Int) async throws -> ClosedRange<Int> {
        let current = try await self.head()
        guard current == head else { throw ActionLogConflict(head: current) }
        return try await append(entries)
    }
}

/// An append refused because the log moved on: another writer appended after the version the caller's
/// decision saw (``ActionLog/append(_:ifHeadIs:)``). Nothing was appended.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let log = MemoryJournal<Int, Add>()
/// _ = try await log.open()
/// _ = try await log.append([Add(amount: 1)])
/// do {
///     _ = try await log.append([Add(amount: 2)], ifHeadIs: 0)
/// } catch let conflict as ActionLogConflict {
///     print(conflict.head)
/// }
/// // Prints "1"
/// ```
public struct ActionLogConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// The log's head when the append was refused: read the records up to it, decide again, and append
    /// with this head.
    public var head: Int

    /// Creates the error for a log whose head is `head`.
    public init(head: Int) { self.head = head }

    /// One line, for a log.
    public var description: String { "the log moved on to version \(head) since the decision" }
}

/// The rules of ``ActionLog`` that its implementations in this package check on their callers.
enum ActionLogRules {
    /// Stops the program when `entries` is empty: an append gives its entries versions, and none is no
    /// append.
    static func requireEntries(_ count: Int, _ log: String) {
        precondition(count > 0, "\(log).append(_:): entries must hold at least one entry; got an empty array")
    }

    /// Stops the program unless `limit` is positive.
    static func requireLimit(_ limit: Int, _ log: String) {
        precondition(limit > 0, "\(log).records(after:limit:): limit must be at least 1; got \(limit)")
    }
}
