import Stillwater

/// Shows rows as lines of text through the package's diffing: a ``SectionDataController`` diffs each new
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
    /// Forwards to the text adapter, and notes that it was called: the controller calls no adapter at
    /// all when nothing changed, and then the text adapter's summary still describes the update before.
    private final class Adapter: ListUpdateAdapter {
        let text: TextListAdapter<TodoRow>
        var wasCalled = false

        init(text: TextListAdapter<TodoRow>) {
            self.text = text
        }

        func reloadData(_ update: ListUpdate<TodoRow>) {
            wasCalled = true
            text.reloadData(update)
        }

        func performBatchUpdates(_ update: ListUpdate<TodoRow>) {
            wasCalled = true
            text.performBatchUpdates(update)
        }
    }

    private let controller: SectionDataController<TodoRow, Adapter>

    /// How many times ``show(_:mode:)`` was called: tells a caller whether its change reached the view.
    public private(set) var showCount = 0

    /// What the last ``show(_:mode:)`` redrew: `redrew 1 of 18 rows`.
    public private(set) var lastRedraw = RedrawSummary(redrawnRows: 0, clearedRows: 0, rowCount: 0, renderedItems: 0)

    /// A view with no rows that sends the lines to (re)write to `output`, in ascending rows.
    ///
    /// - Parameter output: Receives the changes of one update; not called when no line changed.
    public init(output: @escaping ([TextRowChange]) -> Void) {
        controller = SectionDataController(adapter: Adapter(text: TextListAdapter(render: \.text, output: output)))
    }

    /// The rows shown.
    public var rows: [TodoRow] { controller.items }

    /// The lines shown, one per row.
    public var lines: [String] { controller.adapter.text.lines }

    /// Shows `rows` instead of the current rows: in ``ListUpdateMode/partial`` mode, writes only the
    /// lines whose text changed; in ``ListUpdateMode/fullReload`` mode, every line.
    ///
    /// - Returns: What was redrawn (also kept in ``lastRedraw``).
    /// - Complexity: One diff, linear in the number of rows.
    @discardableResult
    public func show(_ rows: [TodoRow], mode: ListUpdateMode = .partial) -> RedrawSummary {
        let adapter = controller.adapter
        adapter.wasCalled = false
        showCount += 1
        controller.update(items: rows, mode: mode)
        lastRedraw = adapter.wasCalled
            ? adapter.text.lastRedraw
            : RedrawSummary(redrawnRows: 0, clearedRows: 0, rowCount: rows.count, renderedItems: 0)
        return lastRedraw
    }
}
