/// An ``ActionJournal`` in memory, with the rules of ``FileJournal``: for tests of code that journals.
///
/// It checks the same call order and versions (``load()`` first, each append one version more), keeps
/// appended records apart until ``sync()`` makes them durable, and counts the syncs, so a test can check
/// that an action was synced before it was acknowledged. ``failNextSync(with:)`` makes a sync fail the
/// way a full disk makes a file journal's fail.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let journal = MemoryJournal<Int, Add>()
/// _ = try journal.load()
/// try journal.append(Add(amount: 1), version: 1)
/// try journal.append(Add(amount: 2), version: 2)
/// print(try journal.load().records.count)      // appended, never synced: gone
/// try journal.append(Add(amount: 3), version: 1)
/// try journal.sync()
/// print(try journal.load().records.map(\.action.amount), journal.syncCount)
/// // Prints "0", "[3] 1"
/// ```
///
/// Its methods throw only where a ``FileJournal``'s could fail for a reason a test can arrange: ``sync()``
/// and ``writeSnapshot(_:version:)``, after ``failNextSync(with:)``. The others are declared `throws`
/// all the same, so that code written against one journal type compiles unchanged against the other.
///
/// Values are kept as they are, not encoded: a type whose `Codable` conformance is wrong is caught by a
/// ``FileJournal``, not here.
public final class MemoryJournal<State: Codable & Sendable, JournaledAction: Action & Codable & Sendable>: ActionJournal
where JournaledAction.State == State {
    private struct Storage {
        var loaded = false
        var snapshot: JournalSnapshot<State>?
        /// The durable records after the snapshot.
        var durable: [JournalRecord<JournaledAction>] = []
        /// Appended, not yet synced.
        var pending: [JournalRecord<JournaledAction>] = []
        var syncCount = 0
        var nextSyncError: (any Error)?

        var appendedVersion: Int {
            pending.last?.version ?? durable.last?.version ?? snapshot?.version ?? 0
        }

        /// Makes `pending` durable, or drops it and throws the error a test asked for.
        mutating func flush() throws {
            defer { pending.removeAll() }
            if let error = nextSyncError {
                nextSyncError = nil
                throw error
            }
            durable += pending
        }
    }

    private let storage = Lock(Storage())

    /// An empty journal: ``load()`` reports version 0.
    public init() {}

    /// How many times ``sync()`` was called (failed ones included), since the journal was made.
    public var syncCount: Int {
        storage.withLock { $0.syncCount }
    }

    /// The newest snapshot and the durable records after it. Records appended and not synced are
    /// dropped, as a restart drops them. Never throws.
    public func load() throws -> JournalContents<State, JournaledAction> {
        storage.withLock { storage in
            storage.loaded = true
            storage.pending.removeAll()
            return JournalContents(snapshot: storage.snapshot, records: storage.durable)
        }
    }

    /// Appends the record of `action` at `version`, not yet durable. Never throws.
    ///
    /// - Parameters:
    ///   - action: The action, kept as it is.
    ///   - version: Exactly one more than the last appended version (or the version ``load()``
    ///     reported); anything else stops the program with a message naming it.
    public func append(_ action: JournaledAction, version: Int) throws {
        storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "append(_:version:)")
            JournalRules.requireNext(version, after: storage.appendedVersion, "MemoryJournal")
            storage.pending.append(JournalRecord(version: version, action: action))
        }
    }

    /// Makes the appended records durable and counts the call.
    ///
    /// - Throws: The error given to ``failNextSync(with:)``, once. The records it was to make durable
    ///   are then dropped, and the journal continues from the last durable version (a ``FileJournal``
    ///   stops instead, until it is reopened).
    public func sync() throws {
        try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "sync()")
            storage.syncCount += 1
            try storage.flush()
        }
    }

    /// Syncs, then keeps `state` as the snapshot at `version` and lets go of the records it covers.
    ///
    /// Its sync is not counted in ``syncCount``.
    ///
    /// - Parameters:
    ///   - state: The state after the action with `version`, kept as it is.
    ///   - version: At most the last appended version; otherwise the program stops with a message
    ///     naming it.
    /// - Throws: What the sync throws (see ``failNextSync(with:)``); the snapshot is not kept then.
    public func writeSnapshot(_ state: State, version: Int) throws {
        try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "writeSnapshot(_:version:)")
            JournalRules.requireSnapshotVersion(version, appended: storage.appendedVersion, "MemoryJournal")
            try storage.flush()
            // As a file journal loads its newest snapshot, an older one than the kept one is not used.
            guard version >= storage.snapshot?.version ?? 0 else { return }
            storage.snapshot = JournalSnapshot(version: version, state: state)
            storage.durable.removeAll { $0.version <= version }
        }
    }

    /// Makes the next ``sync()`` (or the sync a ``writeSnapshot(_:version:)`` starts with) throw
    /// `error` and drop the records it was to make durable.
    public func failNextSync(with error: any Error) {
        storage.withLock { $0.nextSyncError = error }
    }
}

extension MemoryJournal: ActionLog {
    /// The type of entry the journal's records hold: its actions.
    public typealias Entry = JournaledAction

    /// Loads the journal (see ``load()``) and returns what it holds as a log's contents. Never throws.
    public func open() async throws -> ActionLogContents<State, JournaledAction> {
        ActionLogContents(try load())
    }

    /// Appends `entries` as the records of the next versions, makes them durable (one counted sync) and
    /// returns their versions.
    ///
    /// - Parameter entries: At least one entry; an empty array stops the program.
    /// - Throws: The error given to ``failNextSync(with:)``, once: none of the entries is kept then.
    public func append(_ entries: [JournaledAction]) async throws -> ClosedRange<Int> {
        try append(entries, ifHeadIs: nil)
    }

    /// Appends `entries` if the head is `head`, checked and appended under one lock, so several users of
    /// one journal in a process (replicas in a test) each decide on the head they append after.
    ///
    /// - Throws: `ActionLogConflict` when the head moved (nothing kept), or the error given to
    ///   ``failNextSync(with:)``.
    public func append(_ entries: [JournaledAction], ifHeadIs head: Int) async throws -> ClosedRange<Int> {
        try append(entries, ifHeadIs: Optional(head))
    }

    private func append(_ entries: [JournaledAction], ifHeadIs expected: Int?) throws -> ClosedRange<Int> {
        ActionLogRules.requireEntries(entries.count, "MemoryJournal")
        return try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "append(_:)")
            if let expected {
                let head = storage.durable.last?.version ?? storage.snapshot?.version ?? 0
                guard head == expected else { throw ActionLogConflict(head: head) }
            }
            let first = storage.appendedVersion + 1
            for entry in entries {
                storage.pending.append(JournalRecord(version: storage.appendedVersion + 1, action: entry))
            }
            let last = storage.appendedVersion
            storage.syncCount += 1
            try storage.flush()
            return first...last
        }
    }

    /// The durable records after `version`, at most `limit`; the ones the snapshot covers are gone.
    public func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<JournaledAction>] {
        ActionLogRules.requireLimit(limit, "MemoryJournal")
        return storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "records(after:limit:)")
            return storage.durable.lazy.filter { $0.version > version }.prefix(limit)
                .map { ActionLogRecord(version: $0.version, entry: $0.action) }
        }
    }

    /// The last durable version: the last synced record's, else the snapshot's, else 0.
    public func head() async throws -> Int {
        storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "MemoryJournal", "head()")
            return storage.durable.last?.version ?? storage.snapshot?.version ?? 0
        }
    }
}
