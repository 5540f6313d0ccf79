import Foundation
import Stillwater

/// How a ``TodoSession`` writes its list to its file: the one call its save effect makes, injected
/// through the store's dependencies (`dependencies.todoStorage`) so that tests hand in a fake that
/// fails or merges.
///
/// ```swift
/// let failing = TodoStorage { file, _, _ in .failure(.readOnly(path: file.path)) }
/// if case .failure(let error) = failing.update(TodoFile(path: "/tmp/list.json"), TodoList(), nil) {
///     print(error)
/// }
/// // Prints "/tmp/list.json is read-only, so nothing was written; the changes are only in memory"
/// ```
public struct TodoStorage: Sendable {
    /// Writes `list` to `file`, given the list the file held when the program last read or wrote it
    /// (`known`), and says what happened, as ``TodoFile/update(to:from:)`` does.
    public var update: @Sendable (_ file: TodoFile, _ list: TodoList, _ known: TodoList?)
        -> Result<TodoFile.SaveResult, TodoFileError>

    /// A storage that calls `update` for every save.
    public init(
        update: @escaping @Sendable (_ file: TodoFile, _ list: TodoList, _ known: TodoList?)
            -> Result<TodoFile.SaveResult, TodoFileError>
    ) {
        self.update = update
    }

    /// The real file: ``TodoFile/update(to:from:)``, which merges another program's change instead of
    /// overwriting it, and writes atomically.
    public static var live: TodoStorage {
        TodoStorage { file, list, known in
            Result { () throws(TodoFileError) in try file.update(to: list, from: known) }
        }
    }
}

/// The key of `Dependencies.todoStorage`; its default is ``TodoStorage/live``.
public enum TodoStorageKey: DependencyKey {
    /// ``TodoStorage/live``: a store nobody gave a fake writes the real file.
    public static var defaultValue: TodoStorage { .live }
}

extension Dependencies {
    /// How the todo save effect writes the list: ``TodoStorage/live`` unless a test sets a fake.
    public var todoStorage: TodoStorage {
        get { self[TodoStorageKey.self] }
        set { self[TodoStorageKey.self] = newValue }
    }
}

/// The state of a session's saving: which file, what it holds, what waits to be written, and how the
/// last save went. The state of the store ``TodoSession/saving``, kept apart from the list's store so
/// that undo never records a save.
public struct TodoSaveState: Equatable, Sendable {
    /// Where a save stands.
    public enum Status: Equatable, Sendable {
        /// Nothing was saved or asked to be saved yet.
        case idle
        /// A change waits for the save delay to pass.
        case waiting
        /// The last save wrote the list (or found the file already held it).
        case saved
        /// The last save failed; the message says why (`not saved: …`). It stays until a save works,
        /// even while a later change waits.
        case failed(String)
    }

    /// Where the list is saved; `nil` when it is kept in memory only (nothing is ever written then).
    public var file: TodoFile?
    /// The list the file held when the session last read or wrote it; what a save merges against.
    public var onDisk: TodoList?
    /// The list waiting to be written (changed and not saved yet, or whose save failed); `nil` when
    /// the file holds every change.
    public var pending: TodoList?
    /// How the last save went.
    public var status: Status
    /// What the last save merged in from another program that changed the file (see
    /// ``TodoSaveAction/notice(_:file:)``); it stays until a later change is saved without a merge.
    public var mergeNotice: String?
    /// The list a save merged (and wrote), for the session to adopt; `nil` again at the next change. A
    /// change to exactly this list is the adoption, and needs no save.
    public var merged: TodoList?
    /// How the merge of ``merged`` renumbered this program's added items (old identity → new), for the
    /// session to move what points at them (the cursor, an open edit); empty when ``merged`` is `nil`.
    public var renumbered: [Int: Int]
    /// How long after a change its save waits; a change within that time replaces the waiting one
    /// (one save of the last list). Zero saves at once, before the change's dispatch returns.
    public var delay: Duration

    /// A saving state for a list read from `file` (`onDisk`), saving `delay` after the last change.
    public init(file: TodoFile?, onDisk: TodoList?, delay: Duration = .zero) {
        self.file = file
        self.onDisk = onDisk
        pending = nil
        status = .idle
        mergeNotice = nil
        merged = nil
        renumbered = [:]
        self.delay = delay
    }

    /// Why the last save failed, or `nil`.
    public var problem: String? {
        if case .failed(let message) = status { return message }
        return nil
    }

    /// Whether a change is not in the file yet: its save waits, or it failed. Always `false` without a file.
    public var hasUnsavedChanges: Bool {
        file != nil && (pending != nil || problem != nil)
    }
}

/// What happens to a session's saving (the actions of ``TodoSession/saving``).
///
/// ``changed(_:)`` starts a debounced save: it waits ``TodoSaveState/delay`` on the store's
/// `dependencies.scheduler`, then writes through `dependencies.todoStorage` and sends ``finished(_:_:)``.
/// A later change (or a ``flush``) cancels the waiting save, so a burst of changes is one write, of the
/// last list. With no delay the write happens during the dispatch of `changed`.
public enum TodoSaveAction: EffectAction, Equatable, Sendable {
    /// The list changed: save it after the delay.
    case changed(TodoList)
    /// Save the waiting (or failed) list now, cancelling the wait; nothing when the file holds every change.
    case flush
    /// A save of the list ended, with what ``TodoStorage/update`` returned.
    case finished(TodoList, Result<TodoFile.SaveResult, TodoFileError>)
    /// The list was written to a new file (``TodoSession/save(to:)``), which is the file from now on;
    /// a waiting save is cancelled.
    case savedElsewhere(TodoFile, TodoList)

    /// Changes the state, and returns the save to run, if any.
    public func reduce(into state: inout TodoSaveState) -> Effect<TodoSaveAction> {
        switch self {
        case .changed(let list):
            guard let file = state.file else { return .none }
            if let merged = state.merged {
                state.merged = nil
                state.renumbered = [:]
                if list == merged, state.pending == nil {
                    // The session adopted the list the merge wrote: the file holds it already.
                    state.onDisk = list
                    return .none
                }
            }
            state.pending = list
            if state.problem == nil { state.status = .waiting }
            return Self.save(list, to: file, from: state.onDisk, after: state.delay)
        case .flush:
            guard let file = state.file, let list = state.pending else { return .none }
            return Self.save(list, to: file, from: state.onDisk, after: .zero)
        case .finished(let list, .failure(let error)):
            state.status = .failed("not saved: \(error)")
            if state.pending == nil { state.pending = list }
            return .none
        case .finished(let list, .success(let result)):
            if state.pending == list { state.pending = nil }
            state.status = state.pending == nil ? .saved : .waiting
            switch result {
            case .saved:
                state.onDisk = list
                state.mergeNotice = nil
            case .unchanged:
                state.onDisk = list
            case .merged(let merge):
                state.mergeNotice = Self.notice(merge, file: state.file)
                if merge.list == list {
                    // The merge kept this list as it was (it dropped the other's change): nothing to adopt.
                    state.onDisk = list
                } else {
                    // `onDisk` stays the list before the merge until the session adopts the merged list: a
                    // change made before the adoption then merges again instead of writing over the other's.
                    state.merged = merge.list
                    state.renumbered = merge.renumbered
                }
            }
            return .none
        case .savedElsewhere(let file, let list):
            state.file = file
            state.onDisk = list
            state.pending = nil
            state.status = .saved
            return .cancel(id: SaveID())
        }
    }

    /// The status line's account of `merge`: `Merged: ` and what it did to each item both programs
    /// changed, or, when their changes did not meet, which file's changes it brought in.
    ///
    /// ```swift
    /// let base = TodoList(titles: ["milk"])
    /// var theirs = base
    /// TodoAction.add("eggs").reduce(&theirs)
    /// let merge = TodoMerge(base: base, ours: TodoList(titles: ["oat milk"]), theirs: theirs)
    /// print(TodoSaveAction.notice(merge, file: TodoFile(path: "/tmp/list.json")))
    /// // Prints "Merged: another window's changes to list.json"
    /// ```
    public static func notice(_ merge: TodoMerge, file: TodoFile?) -> String {
        guard merge.conflicts.isEmpty else { return "Merged: " + merge.conflicts.joined(separator: "; ") }
        let name = file.map { ($0.path as NSString).lastPathComponent } ?? "the file"
        return "Merged: another window's changes to \(name)"
    }

    /// The identity of the one save that may wait at a time.
    private struct SaveID: Hashable, Sendable {}

    /// Writes `list` to `file` after `delay` (at once when it is zero), then sends ``finished(_:_:)``;
    /// cancels the save waiting before it.
    private static func save(
        _ list: TodoList, to file: TodoFile, from known: TodoList?, after delay: Duration
    ) -> Effect<TodoSaveAction> {
        Effect<TodoSaveAction>.stream { dependencies -> Observable<TodoSaveAction> in
            let storage = dependencies.todoStorage
            guard delay > .zero else { return Observable.just(.finished(list, storage.update(file, list, known))) }
            return Observable.timer(delay, scheduler: dependencies.scheduler)
                .map { _ in .finished(list, storage.update(file, list, known)) }
        }
        .cancellable(id: SaveID(), cancelInFlight: true)
    }
}
