import Stillwater

/// Shows rows as lines of text through the package's diffing: a ``ListDataController`` diffs each new
/// list of rows against the last one, and a ``TextListAdapter`` renders only the rows that were inserted,
/// moved or changed, and reports only the lines whose text changed.
///
/// ```swift
/// let handles = RowHandles()
/// let view = RowListView { changes in print(changes.count, "lines to write") }
/// let list = TodoList(titles: ["milk", "eggs", "tea"])
/// view.show(TodoRow.rows(for: list.items, selectedIndex: nil, handles: handles))
/// var toggled = list
/// toggled.items[1].isDone = true
/// view.show(TodoRow.rows(for: toggled.items, selectedIndex: nil, handles: handles))
/// print(view.lastRedraw)
/// // Prints "3 lines to write", "1 lines to write", "redrew 1 of 3 rows"
/// ```
///
/// Not thread-safe: use it from one thread, like the screen it draws.
public final class RowListView {
    private let controller: ListDataController<TodoRow, TextListAdapter<TodoRow>>

    /// How many times ``show(_:mode:)`` was called: tells a caller whether its change reached the view.
    public private(set) var showCount = 0

    /// What the last ``show(_:mode:)`` redrew: `redrew 1 of 18 rows`.
    public var lastRedraw: RedrawSummary { controller.adapter.lastRedraw }

    /// A view with no rows that sends the lines to (re)write to `output`, in ascending rows.
    ///
    /// - Parameter output: Receives the changes of one update; not called when no line changed.
    public init(output: @escaping ([TextRowChange]) -> Void) {
        controller = ListDataController(adapter: TextListAdapter(render: \.text, output: output))
    }

    /// The rows shown.
    public var rows: [TodoRow] { controller.items }

    /// The lines shown, one per row.
    public var lines: [String] { controller.adapter.lines }

    /// Shows `rows` instead of the current rows: in ``ListUpdateMode/partial`` mode, writes only the
    /// lines whose text changed; in ``ListUpdateMode/fullReload`` mode, every line.
    ///
    /// - Returns: What was redrawn (also kept in ``lastRedraw``).
    /// - Complexity: One diff, linear in the number of rows.
    @discardableResult
    public func show(_ rows: [TodoRow], mode: ListUpdateMode = .partial) -> RedrawSummary {
        showCount += 1
        // The controller hands every update to the adapter (an empty batch when nothing changed), so the
        // adapter's summary always describes this update.
        controller.update(items: rows, mode: mode)
        return lastRedraw
    }
}
