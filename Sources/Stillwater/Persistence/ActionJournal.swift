/// Where a store's actions and snapshots are kept, so that a restarted program gets its state back.
///
/// A journal holds numbered records (each action with the version it made: 1, 2, 3, … with no gaps) and
/// snapshots (the state after some version). Restoring takes the newest snapshot and reduces the records
/// after it onto it (``JournalContents/replayed(onto:)``); effects are not run again.
///
/// The protocol has two implementations in this package: ``FileJournal``, files in a directory, and
/// ``MemoryJournal``, the same rules in memory, for tests. Another store (a database) conforms the same
/// way and keeps the same rules:
///
/// 1. ``load()`` first, once before anything else; it reports the version the journal is at.
/// 2. ``append(_:version:)`` with that version plus one, then plus two, and so on.
/// 3. ``sync()`` makes what was appended durable. An action is *acknowledged* (safe to report as
///    done to whoever sent it) only after a `sync` that covers it returned.
/// 4. Now and then ``writeSnapshot(_:version:)``, so the next load has fewer records to reduce.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let journal = MemoryJournal<Int, Add>()
/// let version = try journal.load().version
/// try journal.append(Add(amount: 2), version: version + 1)
/// try journal.append(Add(amount: 3), version: version + 2)
/// try journal.sync()
/// let (store, contents) = try Store.restoring(from: journal, initialState: 0)
/// print(store.state.value, contents.version)
/// // Prints "5 2"
/// ```
///
/// For a store whose every action must be journaled and synced before it is reduced, use
/// ``Middleware/journaling(to:startingAfter:snapshotEvery:onError:)``.
public protocol ActionJournal<State, JournaledAction>: AnyObject, Sendable {
    /// The type of state the journal's snapshots hold.
    associatedtype State: Codable
    /// The type of action the journal's records hold.
    associatedtype JournaledAction: Action & Codable where JournaledAction.State == State

    /// Reads the newest usable snapshot and the records after it.
    ///
    /// A journal that can repair damage a crash leaves behind (a record half written when the program
    /// stopped) does so here, and says so in ``JournalContents/warnings``; damage it cannot repair is
    /// thrown. After `load` returns, ``append(_:version:)`` continues from the version it reported.
    func load() throws -> JournalContents<State, JournaledAction>

    /// Appends one record: `action`, which made `version`.
    ///
    /// The record is not durable until ``sync()`` returns. `version` must be exactly one more than the
    /// last appended record's (or than the version ``load()`` reported, for the first); anything else is
    /// a programming error and stops the program with a message naming `version`.
    func append(_ action: JournaledAction, version: Int) throws

    /// Makes every appended record durable; for a file journal, written and flushed to the disk.
    ///
    /// An action is acknowledged only after the `sync` that covers it returned. When `sync` throws, the
    /// records it was to make durable are not acknowledged, and the journal either continues from the
    /// last durable version, so the next append is that version plus one (``MemoryJournal``), or stops:
    /// every later write throws until ``load()`` reopens it, which keeps exactly the acknowledged records
    /// and continues after them (``FileJournal``, since after a failed flush it cannot know what reached
    /// the disk). Either way no record of a failed sync is ever loaded as acknowledged by the journal
    /// that reported the failure. (Every journal keeps this rule;
    /// ``Middleware/journaling(to:startingAfter:snapshotEvery:onError:)`` relies on it.)
    func sync() throws

    /// Stores `state` as the snapshot at `version`: the state after the action with that version.
    ///
    /// The snapshot is durable when this returns. `version` must not be more than the last appended
    /// version. The journal may then let go of the records the snapshot covers.
    func writeSnapshot(_ state: State, version: Int) throws
}

extension Store {
    /// Creates a store whose state is the journal's newest snapshot with the records after it replayed
    /// onto it, and returns it with what the journal held.
    ///
    /// The records are reduced without effects (see ``JournalContents/replayed(onto:)``) and without
    /// passing through `middleware`, which sees only the actions dispatched afterwards. Append the next
    /// action at `contents.version + 1`. Show `contents.warnings` to whoever runs the program.
    ///
    /// ```swift
    /// struct Add: Action, Codable {
    ///     var amount: Int
    ///     func reduce(_ total: inout Int) { total += amount }
    /// }
    /// let journal = MemoryJournal<Int, Add>()
    /// _ = try journal.load()
    /// try journal.append(Add(amount: 4), version: 1)
    /// try journal.sync()
    /// try journal.writeSnapshot(4, version: 1)
    /// try journal.append(Add(amount: 1), version: 2)
    /// try journal.sync()
    /// let (store, contents) = try Store.restoring(from: journal, initialState: 0)
    /// print(store.state.value, contents.snapshot?.version ?? 0, contents.records.count)
    /// // Prints "5 1 1"
    /// ```
    ///
    /// - Parameters:
    ///   - journal: The journal to read; this calls its ``ActionJournal/load()``.
    ///   - initialState: The state before any action, used when the journal has no snapshot.
    ///   - dependencies: What the store's effects read (see ``Dependencies``).
    ///   - middleware: The store's middleware, run for actions dispatched from now on.
    ///   - onEffectError: Given the errors effects do not handle (see
    ///     ``Store/init(_:dependencies:middleware:onEffectError:)``).
    /// - Returns: The store, and the journal's contents (its ``JournalContents/version`` and warnings).
    /// - Throws: What the journal's `load()` throws, such as a ``JournalError``.
    /// - Complexity: One reduce per record after the snapshot, plus the journal's reading.
    public static func restoring<J: ActionJournal>(
        from journal: J, initialState: State, dependencies: Dependencies = Dependencies(),
        middleware: [Middleware<State>] = [], onEffectError: (@Sendable (any Error) -> Void)? = nil
    ) throws -> (store: Store<State>, contents: JournalContents<State, J.JournaledAction>) where J.State == State {
        let contents = try journal.load()
        let store = Store(
            contents.replayed(onto: initialState), dependencies: dependencies, middleware: middleware,
            onEffectError: onEffectError)
        return (store, contents)
    }
}

/// The rules every journal of this package checks on its callers, with one wording for all.
enum JournalRules {
    /// Stops the program unless the journal was loaded: `load()` tells the version to continue from.
    static func requireLoaded(_ loaded: Bool, _ journal: String, _ method: String) {
        precondition(
            loaded,
            "\(journal).\(method): call load() first; it reads what the journal holds and the version to append after")
    }

    /// Stops the program unless `version` is one more than `last`, the journal's last appended version.
    static func requireNext(_ version: Int, after last: Int, _ journal: String) {
        guard version != last + 1 else { return }
        // A caller ahead of the journal most likely missed a failed sync, which dropped its records.
        let hint = version > last + 1 ? " (a failed sync drops the records it was to write)" : ""
        preconditionFailure(
            "\(journal).append(_:version:): version must be \(last + 1), one more than the last appended version\(hint); got \(version)")
    }

    /// Stops the program unless `version` is a version the journal has reached.
    static func requireSnapshotVersion(_ version: Int, appended last: Int, _ journal: String) {
        precondition(
            version >= 0 && version <= last,
            "\(journal).writeSnapshot(_:version:): version must be between 0 and the last appended version \(last); got \(version)")
    }
}
