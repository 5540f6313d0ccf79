import Stillwater

/// Every change to the todo list, as one `Action` enum (the Redux shape): the store reduces it, the
/// history records it for undo and redo.
///
/// Actions name items by identity, not by position, so an action recorded in the history means the same
/// item after others moved. An action whose item no longer exists changes nothing.
///
/// ```swift
/// let store = Store(TodoList(titles: ["milk", "eggs"]))
/// store.dispatch(TodoAction.toggle(id: 2))
/// store.dispatch(TodoAction.add("bread"))
/// print(store.state.value.items.map { "\($0.title) \($0.isDone)" })
/// // Prints "[\"milk false\", \"eggs true\", \"bread false\"]"
/// ```
public enum TodoAction: Action, Codable, Equatable, Sendable {
    /// Appends an item with this title (cleaned with ``TodoItem/cleanTitle(_:)``; nothing is added when
    /// the cleaned title is empty).
    case add(String)
    /// Marks the item done, or not done again.
    case toggle(id: Int)
    /// Gives the item a new title (cleaned; an empty cleaned title changes nothing).
    case rename(id: Int, title: String)
    /// Removes the item.
    case delete(id: Int)
    /// Moves the item past its nearest neighbour in `direction` among the items `filter` shows, so that
    /// on a filtered screen the item visibly moves by one row. At the end of the list it stays.
    case move(id: Int, direction: MoveDirection, filter: TodoFilter)

    /// Applies the action to `list`.
    ///
    /// - Complexity: O(n) for n items (finding the item by identity).
    public func reduce(_ list: inout TodoList) {
        switch self {
        case .add(let title):
            let title = TodoItem.cleanTitle(title)
            guard !title.isEmpty else { return }
            list.items.append(TodoItem(id: list.allocateID(), title: title))
        case .toggle(let id):
            guard let index = list.index(of: id) else { return }
            list.items[index].isDone.toggle()
        case .rename(let id, let title):
            let title = TodoItem.cleanTitle(title)
            guard let index = list.index(of: id), !title.isEmpty else { return }
            list.items[index].title = title
        case .delete(let id):
            guard let index = list.index(of: id) else { return }
            list.items.remove(at: index)
        case .move(let id, let direction, let filter):
            guard let index = list.index(of: id),
                  let target = Self.neighbour(of: index, in: list.items, direction, filter) else { return }
            let item = list.items.remove(at: index)
            list.items.insert(item, at: target)
        }
    }

    /// The index of the nearest item in `direction` from `index` that `filter` shows, if any.
    private static func neighbour(
        of index: Int, in items: [TodoItem], _ direction: MoveDirection, _ filter: TodoFilter
    ) -> Int? {
        switch direction {
        case .up: items[..<index].lastIndex(where: filter.shows)
        case .down: items[(index + 1)...].firstIndex(where: filter.shows)
        }
    }
}
