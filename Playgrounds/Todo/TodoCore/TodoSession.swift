import Foundation
import Stillwater

/// Where the interactive cursor is: on an item (by identity, so it follows the item when it moves), or,
/// once that item is gone or hidden, at a position in the rows.
public struct TodoSelection: Equatable, Sendable {
    /// The identity of the item under the cursor, if it is still shown.
    public var id: Int?
    /// The row the cursor falls back to (clamped to the rows) when no shown item has ``id``.
    public var index: Int

    /// A cursor on item `id`, falling back to row `index`.
    public init(id: Int? = nil, index: Int = 0) {
        self.id = id
        self.index = index
    }

    /// The row the cursor is on among `items`: the item with ``id``, else ``index`` clamped to the
    /// items; `nil` when there are no items.
    public func resolved(in items: [TodoItem]) -> Int? {
        guard !items.isEmpty else { return nil }
        if let id, let index = items.firstIndex(where: { $0.id == id }) { return index }
        return min(max(index, 0), items.count - 1)
    }
}

/// What a command did, for the piped mode to report.
public enum CommandOutcome: Equatable, Sendable {
    /// The list (or the filter) changed; the message says how. Print the list after it.
    case changed(String)
    /// Nothing changed, for a reason the message gives (`nothing to undo`).
    case unchanged(String)
    /// Print the list.
    case list
    /// Print the help.
    case help
    /// Stop reading commands.
    case quit
}

/// One todo list being worked on: the store and its history, the filter and the cursor, the rows they
/// make, and the handles the rows call. Both modes of `todo` drive a session; tests drive it directly.
///
/// The rows are a derived property: `Property.combine` of the store's items (a scope, told only when the
/// items changed), the filter and the cursor, made into ``TodoRow``s. Its value is always the rows of the
/// list, filter and cursor now, and its observers hear of each change that changed the rows, once. Rows
/// call ``handles``, which the session routes into the store once, when it is made; the history records
/// every ``TodoAction`` for undo.
///
/// ```swift
/// let session = TodoSession(TodoList(titles: ["milk", "eggs"]))
/// if case .changed(let message) = try session.perform(.toggle(2)) { print(message) }
/// for row in session.rows.value { print(row.text) }
/// // Prints "item 2 \"eggs\" is done", "   1. [ ] milk", "   2. [x] eggs"
/// ```
///
/// When given a ``TodoFile``, the session saves the list through its save store, ``saving``: each change
/// is a ``TodoSaveAction/changed(_:)``, saved `saveDelay` after the last change (at once, before the
/// change returns, when the delay is zero) with ``TodoFile/update(to:from:)``, and ``saveNow()`` saves a
/// waiting change at once (every exit calls it). A save that fails leaves the change in memory and says
/// why in ``saveProblem`` (``hasUnsavedChanges`` is then `true`, and ``save(to:)`` saves to another
/// file); a save that finds another program's change merges it in, says so in ``mergeNotice``, and
/// restarts undo (undo restores whole past states, so stepping back over the merge would drop the
/// other's change). The saves are actions of their own store, so undo never records them.
///
/// Not thread-safe: use a session from one thread, like the terminal it serves.
public final class TodoSession {
    /// The list, changed only by ``TodoAction``s (and undo and redo).
    public let store: Store<TodoList>
    /// The record of actions that undo and redo step through.
    public let history: History<TodoAction>
    /// Which items the rows show. View state: not saved, and not undone.
    public let filter: MutableProperty<TodoFilter>
    /// The interactive cursor; ignored when the session does not show one.
    public let selection: MutableProperty<TodoSelection>
    /// The handles every row calls.
    public let handles = RowHandles()
    /// Called with a title to add an item (by the piped `add` command and the screen's line editor).
    public let add = ActionHandle<String>()
    /// The rows the filter shows, numbered, with the cursor mark when the session shows one.
    public let rows: Property<[TodoRow]>
    /// The saving of the list: its file, what waits to be written, how the last save went. Its effects
    /// wait on the scheduler and write through the storage given to ``init(_:file:showsCursor:undoLimit:saveDelay:scheduler:storage:)``.
    public let saving: Store<TodoSaveState>
    /// Why the last save failed, or `nil` when it worked (or there is no file).
    public let saveProblem: Property<String?>
    /// What the last save merged in from another program that changed the file; it stays until the
    /// next change of the list is saved without a merge (`nil` then, and before any merge).
    public let mergeNotice: Property<String?>
    /// The identities a merge changed when the session adopted it (each old identity of an item this
    /// session added, with its new one), sent right after the adoption; the cursor (``selection``) has
    /// moved along already. Whoever else kept an identity (the screen's open edit) moves it here, so it
    /// does not land on the other program's item that took the old identity.
    public var renumberings: Observable<[Int: Int]> { renumbering.asObservable() }
    /// Whether the rows mark the row under the cursor.
    public let showsCursor: Bool
    /// Where the list is saved after each change (see ``saving``); `nil` when it is kept in memory only.
    public var file: TodoFile? { saving.state.value.file }

    private let subscriptions = SubscriptionBag()
    private let renumbering = PublishRelay<[Int: Int]>()

    /// A session over `list`.
    ///
    /// - Parameters:
    ///   - list: The list to start from (loaded from a file, say). Undo never goes back past it.
    ///   - file: Where to save the list after each change; `nil` to keep it in memory only. The file is
    ///     taken to hold `list` (as ``TodoFile/load(now:)`` returned it), or nothing.
    ///   - showsCursor: Whether rows mark the row under ``selection`` (the interactive mode).
    ///   - undoLimit: How many changes undo can step back over.
    ///   - saveDelay: How long after the last change the list is saved; zero (the default) saves each
    ///     change before the call that made it returns.
    ///   - scheduler: What a delayed save waits on: a ``PollingScheduler`` whose ``PollingScheduler/runDue()``
    ///     the session's thread calls, or a test's virtual clock. Unused when `saveDelay` is zero. The
    ///     session is not thread-safe, so the scheduler must run the save on the session's thread.
    ///   - storage: How the list is written; ``TodoStorage/live`` (the file) unless a test gives a fake.
    public init(
        _ list: TodoList = TodoList(), file: TodoFile? = nil, showsCursor: Bool = false, undoLimit: Int = 100,
        saveDelay: Duration = .zero, scheduler: any Scheduler = ImmediateScheduler(), storage: TodoStorage = .live
    ) {
        let history = History<TodoAction>(undoLimit: undoLimit)
        let store = Store(list, middleware: [history.middleware])
        self.store = store
        self.history = history
        self.showsCursor = showsCursor
        filter = MutableProperty(.all)
        selection = MutableProperty(TodoSelection())
        let saving = Store(
            TodoSaveState(file: file, onDisk: file == nil ? nil : list, delay: saveDelay),
            dependencies: Dependencies {
                $0.scheduler = scheduler
                $0.todoStorage = storage
            })
        self.saving = saving
        saveProblem = saving.scope(\.problem)
        mergeNotice = saving.scope(\.mergeNotice)

        let handles = self.handles
        // Three roots (the store, the filter, the cursor): a change of one is at most one new list of rows.
        rows = Property.combine(store.scope(\.items), filter, selection) { items, filter, selection in
            let shown = filter.apply(to: items)
            return TodoRow.rows(
                for: shown, selectedIndex: showsCursor ? selection.resolved(in: shown) : nil, handles: handles)
        }

        // The rows talk to the store through their handles: routed here, once.
        handles.toggle.map { TodoAction.toggle(id: $0) }.bind(to: store).store(in: subscriptions)
        handles.delete.map { TodoAction.delete(id: $0) }.bind(to: store).store(in: subscriptions)
        handles.rename.map { TodoAction.rename(id: $0.id, title: $0.title) }.bind(to: store).store(in: subscriptions)
        let filter = self.filter
        handles.move.map { TodoAction.move(id: $0.id, direction: $0.direction, filter: filter.value) }
            .bind(to: store).store(in: subscriptions)
        add.map { TodoAction.add($0) }.bind(to: store).store(in: subscriptions)

        store.state.distinctUntilChanged().skip(1)
            .map { TodoSaveAction.changed($0) }
            .bind(to: saving).store(in: subscriptions)
        saving.scope(\.merged)
            .observe { [weak self, saving] merged in
                if let merged { self?.adopt(merged, renumbered: saving.state.value.renumbered) }
            }
            .store(in: subscriptions)
    }

    /// The list now.
    public var list: TodoList { store.state.value }

    /// Whether the list has changes the file does not hold: their save waits, or it failed. Always
    /// `false` without a file.
    public var hasUnsavedChanges: Bool {
        saving.state.value.hasUnsavedChanges
    }

    /// Saves a change whose save waits (or failed) now, before returning; does nothing when the file
    /// holds every change. Every way out of the program calls it first.
    public func saveNow() {
        saving.dispatch(TodoSaveAction.flush)
    }

    /// Adds an item titled `title` (through ``add``, as a row's editor does) and returns it as the list
    /// now holds it: under a new identity when a merge with another program's save renumbered it.
    ///
    /// ```swift
    /// let session = TodoSession(TodoList(titles: ["milk"]))
    /// print(session.addItem("  eggs ")?.id ?? 0, session.addItem(" ") == nil)
    /// // Prints "2 true"
    /// ```
    ///
    /// - Returns: The added item, or `nil` when the cleaned title was empty (nothing is added then).
    public func addItem(_ title: String) -> TodoItem? {
        let cleaned = TodoItem.cleanTitle(title)
        guard !cleaned.isEmpty else { return nil }
        let before = Set(list.items.map(\.id))
        add(title)
        return list.items.last { !before.contains($0.id) && $0.title == cleaned }
    }

    /// Saves the list to a new file at `path`, and keeps saving there from now on.
    ///
    /// - Throws: ``TodoFileError/alreadyExists(path:)`` when something is at `path` already (it is never
    ///   overwritten, even by a file another program creates meanwhile), or why the file could not be
    ///   written; the session keeps its old file then.
    public func save(to path: String) throws(TodoFileError) {
        let target = TodoFile(path: path)
        let list = self.list
        try target.saveNew(list)
        saving.dispatch(TodoSaveAction.savedElsewhere(target, list))
    }

    /// Makes `merged` (a save's merge with another program's change) the list, with undo starting over
    /// from it, and moves the cursor and whoever observes ``renumberings`` to the items' new identities.
    private func adopt(_ merged: TodoList, renumbered: [Int: Int]) {
        // Queued behind the change being saved, if any; not a TodoAction, so the history does not record it.
        store.dispatch(AdoptList(list: merged))
        history.removeUndoStates()
        guard !renumbered.isEmpty else { return }
        if let id = selection.value.id, let new = renumbered[id] { selection.value.id = new }
        renumbering.accept(renumbered)
    }

    /// The row with number `number` (from 1).
    ///
    /// - Throws: ``CommandError/noSuchItem(number:rowCount:)`` when the rows have no such number.
    public func row(_ number: Int) throws(CommandError) -> TodoRow {
        let rows = self.rows.value
        guard rows.indices.contains(number - 1) else { throw .noSuchItem(number: number, rowCount: rows.count) }
        return rows[number - 1]
    }

    /// `2 of 5 left · showing all`: how many items are not done, and what the filter shows.
    public var summary: String {
        let list = self.list
        let shown = filter.value == .all ? "" : " · showing \(filter.value.rawValue) (\(rows.value.count))"
        return "\(list.remaining) of \(list.items.count) left\(shown)"
    }

    /// Steps back over the last change.
    ///
    /// - Returns: Whether there was a change to undo.
    @discardableResult
    public func undo() -> Bool {
        guard history.canUndo else { return false }
        store.dispatch(history.undo)
        return true
    }

    /// Steps forward over the last undo.
    ///
    /// - Returns: Whether there was an undo to redo.
    @discardableResult
    public func redo() -> Bool {
        guard history.canRedo else { return false }
        store.dispatch(history.redo)
        return true
    }

    /// Runs `command` against the list: a row command calls that row's handle, so it goes the same way as
    /// a key pressed on the row.
    ///
    /// - Throws: ``CommandError/noSuchItem(number:rowCount:)`` for a number the rows do not show; the
    ///   list is unchanged then.
    public func perform(_ command: TodoCommand) throws(CommandError) -> CommandOutcome {
        switch command {
        case .add(let title):
            guard let added = addItem(title) else { return .unchanged("nothing added: the title was empty") }
            guard let number = number(of: added.id) else {
                return .changed("added \"\(added.title)\" (hidden: showing \(filter.value.rawValue) items)")
            }
            return .changed("added \"\(added.title)\" as item \(number)")
        case .toggle(let number):
            let row = try row(number)
            return mark(row, number, done: !row.item.isDone)
        case .done(let number):
            return mark(try row(number), number, done: true)
        case .undone(let number):
            return mark(try row(number), number, done: false)
        case .edit(let number, let title):
            let row = try row(number)
            row.rename(to: title)
            return .changed("item \(number) is now \"\(TodoItem.cleanTitle(title))\"" + hiddenNote(row.item.id))
        case .delete(let number):
            let row = try row(number)
            row.delete()
            return .changed("deleted item \(number) \"\(row.item.title)\"")
        case .move(let number, let direction):
            let row = try row(number)
            if (direction == .up && number == 1) || (direction == .down && number == rows.value.count) {
                return .unchanged("item \(number) is already at the \(direction == .up ? "top" : "bottom")")
            }
            row.move(direction)
            return .changed("moved \"\(row.item.title)\" \(direction.rawValue) to item \(self.number(of: row.item.id) ?? number)")
        case .filter(let newFilter):
            filter.value = newFilter
            return .changed("showing \(newFilter == .all ? "all" : newFilter.rawValue) items")
        case .undo:
            return undo() ? .changed("undid the last change") : .unchanged("nothing to undo")
        case .redo:
            return redo() ? .changed("redid the last undone change") : .unchanged("nothing to redo")
        case .list: return .list
        case .help: return .help
        case .quit: return .quit
        }
    }

    /// Marks `row` (number `number`) done or not done: a note, not a change, when it already is.
    private func mark(_ row: TodoRow, _ number: Int, done: Bool) -> CommandOutcome {
        let item = "item \(number) \"\(row.item.title)\""
        let state = done ? "done" : "not done"
        guard row.item.isDone != done else { return .unchanged("\(item) is already \(state)") }
        row.toggle()
        return .changed("\(item) is \(state)" + hiddenNote(row.item.id))
    }

    /// The number of the row showing item `id`, if one does.
    private func number(of id: Int) -> Int? {
        rows.value.first { $0.item.id == id }?.number
    }

    private func hiddenNote(_ id: Int) -> String {
        number(of: id) == nil ? " (now hidden: showing \(filter.value.rawValue) items)" : ""
    }
}

/// Replaces the whole list with one merged from another program's change to the file.
private struct AdoptList: Action {
    let list: TodoList

    func reduce(_ state: inout TodoList) {
        state = list
    }
}
