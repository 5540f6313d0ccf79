extension Middleware {
    /// A middleware that appends every action of the journal's type to `journal` and syncs it before the
    /// action is reduced (write-ahead), so every state observers see is durable.
    ///
    /// Actions of other types pass through unjournaled. When the append or the sync throws, the action
    /// is not reduced (later middleware does not see it either) and `onError` is given the error; the
    /// next action is journaled at the same version, since a failed sync drops what it was to write.
    /// With `snapshotEvery`, the state after every `snapshotEvery`-th version is written as a snapshot;
    /// a failed snapshot is given to `onError` too, and the action stays reduced. A ``FileJournal``
    /// stops after a failed write, sync or snapshot: every later action is refused the same way (with
    /// ``JournalError/Kind/stopped``) until the journal's ``FileJournal/load()`` reopens it; the actions
    /// journaled after that continue from the version the middleware reached.
    ///
    /// ```swift
    /// struct Add: Action, Codable {
    ///     var amount: Int
    ///     func reduce(_ total: inout Int) { total += amount }
    /// }
    /// struct DiskFull: Error {}
    /// let journal = MemoryJournal<Int, Add>()
    /// let contents = try journal.load()
    /// let store = Store(contents.replayed(onto: 0), middleware: [
    ///     .journaling(to: journal, startingAfter: contents.version, onError: { print("not saved:", $0) }),
    /// ])
    /// store.dispatch(Add(amount: 2))
    /// journal.failNextSync(with: DiskFull())
    /// store.dispatch(Add(amount: 5))
    /// store.dispatch(Add(amount: 1))
    /// print(store.state.value, try journal.load().version)
    /// // Prints "not saved: DiskFull()", "3 2"
    /// ```
    ///
    /// Put it last in the store's middleware, so that what it journals is what is reduced. An
    /// ``EffectAction`` is journaled as itself; the actions its effects send back pass through the
    /// middleware and are journaled in their turn, and restoring replays them without running the
    /// effect again. Actions restored by ``Store/restoring(from:initialState:dependencies:middleware:onEffectError:)``
    /// do not pass through middleware, so they are not journaled twice.
    ///
    /// - Parameters:
    ///   - journal: A loaded journal, used by this middleware alone from now on.
    ///   - version: The version the journal is at (``JournalContents/version`` of its load); the first
    ///     action is appended at the next one. Another version stops the program at the first append.
    ///   - snapshotEvery: How many versions apart snapshots are written, or `nil` for none. Must be
    ///     positive.
    ///   - onError: Given every error of the journal, on the thread reducing the store's actions.
    /// - Complexity: One append and one sync per journaled action, on the thread that reduces it: for a
    ///   ``FileJournal``, one write and one `fsync` (often milliseconds) before each action is reduced. To
    ///   sync a batch of actions at once instead, append and sync from your own code.
    public static func journaling<J: ActionJournal>(
        to journal: J, startingAfter version: Int, snapshotEvery: Int? = nil,
        onError: @escaping @Sendable (any Error) -> Void
    ) -> Middleware where J.State == State {
        let name = "Middleware.journaling(to:startingAfter:snapshotEvery:onError:)"
        precondition(version >= 0, "\(name): startingAfter must not be negative (got \(version))")
        precondition(
            snapshotEvery.map { $0 > 0 } ?? true,
            "\(name): snapshotEvery must be positive (got \(snapshotEvery ?? 0)); pass nil for no snapshots")
        let lastVersion = SharedLock(version)
        return Middleware { store, action, next in
            guard let journaled = action as? J.JournaledAction else { return next(action) }
            let version = lastVersion.withLock { $0 } + 1
            do {
                try journal.append(journaled, version: version)
                try journal.sync()
            } catch {
                return onError(error)
            }
            lastVersion.withLock { $0 = version }
            next(action)
            guard let snapshotEvery, version.isMultiple(of: snapshotEvery) else { return }
            do {
                try journal.writeSnapshot(store.state.value, version: version)
            } catch {
                onError(error)
            }
        }
    }
}
