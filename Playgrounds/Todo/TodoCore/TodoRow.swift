import Stillwater

/// A row's calls to its parent, as ``ActionHandle``s: made once per session and shared by every row, so
/// a row's inputs stay `Equatable` and an unchanged row compares equal to its last version.
///
/// The session routes each handle into its store once (`toggle.map { TodoAction.toggle(id: $0) }`), so
/// a row never holds a closure of its parent.
public struct RowHandles: Equatable, Sendable {
    /// Called with an item's identity to mark it done or not done.
    public let toggle = ActionHandle<Int>()
    /// Called with an item's identity to delete it.
    public let delete = ActionHandle<Int>()
    /// Called to move an item by one row.
    public let move = ActionHandle<RowMove>()
    /// Called to give an item a new title.
    public let rename = ActionHandle<RowRename>()

    /// A new set of handles, each equal only to itself.
    public init() {}
}

/// What ``RowHandles/move`` carries: which item, and which way. Made by ``TodoRow/move(_:)``.
public struct RowMove: Equatable, Sendable {
    /// The item's identity.
    public var id: Int
    /// Which way it moves.
    public var direction: MoveDirection
}

/// What ``RowHandles/rename`` carries: which item, and its new title. Made by ``TodoRow/rename(to:)``.
public struct RowRename: Equatable, Sendable {
    /// The item's identity.
    public var id: Int
    /// The new title (cleaned by the action).
    public var title: String
}

/// One row of the list as the screen shows it: the rendering model of an item.
///
/// A row holds everything its line depends on (the item, its number, whether the cursor is on it) and
/// the handles it calls, nothing else. So two rows are equal exactly when their line would look the same
/// and call the same parent; the list diff redraws a row only when it is not equal to its last version.
///
/// ```swift
/// let handles = RowHandles()
/// let row = TodoRow(item: TodoItem(id: 7, title: "milk"), number: 1, isSelected: false, handles: handles)
/// print(row.text)
/// print(row == TodoRow(item: row.item, number: 1, isSelected: false, handles: handles))
/// // Prints "   1. [ ] milk", "true"
/// ```
public struct TodoRow: Diffable, Equatable, Sendable {
    /// The item shown.
    public let item: TodoItem
    /// The row's number, from 1, in the filtered list: what commands like `toggle 2` refer to.
    public let number: Int
    /// Whether the interactive cursor is on this row.
    public let isSelected: Bool
    /// What the row calls.
    public let handles: RowHandles

    /// A row showing `item` as number `number`.
    public init(item: TodoItem, number: Int, isSelected: Bool, handles: RowHandles) {
        self.item = item
        self.number = number
        self.isSelected = isSelected
        self.handles = handles
    }

    /// The item's identity: a row is the same row for as long as it shows the same item.
    public var diffIdentifier: Int { item.id }

    /// The row's line: a cursor mark, the number (right-aligned to two places), a check box, the title.
    public var text: String {
        let number = self.number < 10 ? " \(self.number)" : "\(self.number)"
        return "\(isSelected ? ">" : " ") \(number). [\(item.isDone ? "x" : " ")] \(item.title)"
    }

    /// Asks the parent to mark this item done, or not done.
    public func toggle() { handles.toggle(item.id) }

    /// Asks the parent to delete this item.
    public func delete() { handles.delete(item.id) }

    /// Asks the parent to move this item by one row.
    public func move(_ direction: MoveDirection) { handles.move(RowMove(id: item.id, direction: direction)) }

    /// Asks the parent to give this item a new title.
    public func rename(to title: String) { handles.rename(RowRename(id: item.id, title: title)) }

    /// The rows for `items`, numbered from 1, with the cursor on the row at `selectedIndex` (if any).
    public static func rows(
        for items: [TodoItem], selectedIndex: Int?, handles: RowHandles
    ) -> [TodoRow] {
        items.enumerated().map { index, item in
            TodoRow(item: item, number: index + 1, isSelected: index == selectedIndex, handles: handles)
        }
    }
}
