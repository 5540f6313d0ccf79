/// Holds the items of one flat list (a list without sections), and hands each change of them to an
/// adapter as one batch update (or one full reload).
///
/// The controller is the list's data source: read ``items`` to answer "how many rows" and "what is in row
/// *i*". ``update(items:mode:completion:)`` diffs the new items against ``items`` and gives the adapter a
/// ``ListUpdate``; ``items`` become the new items only when the adapter commits, at the moment its view
/// applies the change, so the view never sees counts that disagree with its data.
///
/// ```swift
/// let adapter = TextListAdapter<String>(render: { "- \($0)" }, output: { _ in })
/// let controller = ListDataController(adapter: adapter)
/// controller.update(items: ["milk", "eggs", "bread"])
/// controller.update(items: ["milk", "oat milk", "bread"])
/// print(adapter.lastRedraw)
/// // Prints "redrew 1 of 3 rows"
/// ```
///
/// Updates happen one at a time. An update asked for while the adapter has not finished the previous one
/// waits; when several wait, only the latest items are shown (with the latest mode), and the completions
/// of all of them run when it is done.
///
/// - Note: The controller is not thread-safe: use it from one thread (or actor), like the view it drives.
/// - Note: It knows no sections. For a list in sections, diff the sections with ``SectionedChangeset``
///   and apply it with ``Swift/Array/applying(_:newSections:)``.
public final class ListDataController<Item: Diffable, Adapter: ListUpdateAdapter> where Adapter.Item == Item {
    /// The adapter that shows the items.
    public let adapter: Adapter
    /// The items the adapter shows (the last committed ones).
    public private(set) var items: [Item] = []
    private let isEqual: (Item, Item) -> Bool
    /// The update the adapter is applying, if any.
    private var current: Pending?
    /// The update waiting for the current one to finish.
    private var waiting: Pending?
    /// Numbers the updates, so a late call from an old ``ListUpdate`` does nothing.
    private var generation = 0
    private var isDraining = false

    private struct Pending {
        var items: [Item]
        var mode: ListUpdateMode
        var completions: [() -> Void]
    }

    /// A controller with no items yet, comparing items' content with `==`.
    public convenience init(adapter: Adapter) where Item: Equatable {
        self.init(adapter: adapter, isEqual: ==)
    }

    /// A controller with no items yet, comparing items' content with `isEqual`.
    ///
    /// - Parameters:
    ///   - adapter: What the controller tells of each batch of changes.
    ///   - isEqual: Returns `true` when an item kept its content (so it is not redrawn).
    public init(adapter: Adapter, isEqual: @escaping (Item, Item) -> Bool) {
        self.adapter = adapter
        self.isEqual = isEqual
    }

    /// Whether the adapter is applying an update that it has not finished.
    public var isUpdating: Bool { current != nil }

    /// Shows `items` instead of the current ones.
    ///
    /// In ``ListUpdateMode/partial`` mode (the default) the adapter gets one batch update with the
    /// changeset from the current items (an empty one when nothing changed, so the adapter still commits
    /// the new, equal items and can report that nothing was redrawn). In ``ListUpdateMode/fullReload``
    /// mode it is told to reload.
    /// If an update is in progress, this one waits (see the type's description).
    ///
    /// - Parameters:
    ///   - items: The items to show.
    ///   - mode: How the adapter is told.
    ///   - completion: Called once the adapter finished showing `items` (or the items of a later update
    ///     that replaced this one while it waited).
    /// - Complexity: One diff in partial mode, linear in the two lists' lengths when their order mostly held
    ///   (see ``Changeset/init(from:to:)``).
    public func update(items: [Item], mode: ListUpdateMode = .partial, completion: (() -> Void)? = nil) {
        var next = waiting ?? Pending(items: items, mode: mode, completions: [])
        next.items = items
        next.mode = mode
        if let completion { next.completions.append(completion) }
        waiting = next
        drain()
    }

    /// Starts waiting updates while the adapter finishes them at once. A loop rather than recursion, so
    /// adapters and completions that update again never grow the stack.
    private func drain() {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while current == nil, let next = waiting {
            waiting = nil
            start(next)
        }
    }

    private func start(_ pending: Pending) {
        current = pending
        generation += 1
        let generation = self.generation
        let update = ListUpdate(
            oldItems: items, newItems: pending.items,
            changeset: pending.mode == .partial
                ? Changeset(from: items, to: pending.items, isEqual: isEqual)
                : Changeset(deletes: Array(items.indices), inserts: Array(pending.items.indices)),
            commit: { [weak self] in self?.commit(generation) },
            finish: { [weak self] in self?.finish(generation) }
        )
        switch pending.mode {
        case .fullReload: adapter.reloadData(update)
        case .partial: adapter.performBatchUpdates(update)
        }
    }

    private func commit(_ generation: Int) {
        // Committing again assigns the same items; the generation stops calls from a replaced update.
        guard generation == self.generation, let current else { return }
        items = current.items
    }

    private func finish(_ generation: Int) {
        guard generation == self.generation, let finished = current else { return }
        commit(generation)
        current = nil
        for completion in finished.completions { completion() }
        drain()
    }
}

/// The earlier name of ``ListDataController``, which never had sections: it holds the items of one flat
/// list. Code that uses this name compiles unchanged, with a warning that names the new one.
@available(*, deprecated, renamed: "ListDataController")
public typealias SectionDataController = ListDataController
