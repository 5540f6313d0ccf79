/// Something that shows a list (a list view, a terminal list, a connection to a client) and is told by a
/// ``ListDataController`` how it changes.
///
/// Each call hands over one ``ListUpdate``. The adapter calls ``ListUpdate/commit()`` at the moment it
/// applies the change (inside `performBatchUpdates` for a UIKit collection view, just before drawing for a
/// terminal): until then the controller's ``ListDataController/items`` are the old items, from then
/// on the new ones, so whatever the adapter's view asks the controller always agrees with what the view
/// has been told. Then it calls ``ListUpdate/finish()`` once it is done (at once, or when its animation ends).
///
/// ``TextListAdapter`` is a ready-made adapter that renders a list as lines of text.
public protocol ListUpdateAdapter<Item>: AnyObject {
    /// The type of the items the list shows.
    associatedtype Item

    /// Replaces everything the list shows with `update.newItems`, without animating changes.
    ///
    /// `update.changeset` deletes every old index and inserts every new one.
    func reloadData(_ update: ListUpdate<Item>)

    /// Applies `update.changeset` to the list, as one batch, turning `update.oldItems` into
    /// `update.newItems`.
    func performBatchUpdates(_ update: ListUpdate<Item>)
}

/// One change a ``ListDataController`` hands to its adapter: the old and new items, the changeset
/// between them, and the two calls the adapter makes back.
///
/// Both calls may be made from inside the adapter's method or later. For an update a
/// ``ListDataController`` made, each takes effect once (calling it again does nothing); an update made
/// with ``init(oldItems:newItems:changeset:commit:finish:)`` runs its closure on every call. They must be made on the thread the controller is used on.
public struct ListUpdate<Item> {
    /// The items the adapter shows now.
    public let oldItems: [Item]
    /// The items the adapter shows once it applied this update.
    public let newItems: [Item]
    /// The changeset that turns ``oldItems`` into ``newItems``.
    public let changeset: Changeset
    @usableFromInline let onCommit: () -> Void
    @usableFromInline let onFinish: () -> Void

    /// An update from `oldItems` to `newItems`; `commit` and `finish` are what the adapter's calls run.
    /// (Controllers build updates; adapters' tests may too.)
    public init(
        oldItems: [Item], newItems: [Item], changeset: Changeset,
        commit: @escaping () -> Void = {}, finish: @escaping () -> Void = {}
    ) {
        self.oldItems = oldItems
        self.newItems = newItems
        self.changeset = changeset
        self.onCommit = commit
        self.onFinish = finish
    }

    /// Makes ``newItems`` the controller's items. Call it at the moment the view applies the change.
    public func commit() { onCommit() }

    /// Tells the controller the adapter is done: the controller commits (if ``commit()`` was not called),
    /// runs the completions of this update and starts the next one, if any is waiting.
    public func finish() { onFinish() }
}

/// How ``ListDataController/update(items:mode:completion:)`` hands a change to its adapter.
public enum ListUpdateMode: Sendable, Equatable {
    /// One call of ``ListUpdateAdapter/reloadData(_:)``: the adapter redraws everything.
    case fullReload
    /// One call of ``ListUpdateAdapter/performBatchUpdates(_:)`` with the changeset from the current items
    /// to the new ones (empty when nothing changed).
    case partial
}
