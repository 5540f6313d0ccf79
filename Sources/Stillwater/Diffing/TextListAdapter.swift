/// A ``ListUpdateAdapter`` that shows a list as lines of text, one row per item, and redraws only the rows
/// whose text changed.
///
/// The adapter keeps the lines it shows in ``lines``. For a batch update it renders only the inserted,
/// moved and updated items (kept items keep their lines), then compares the new lines with the old ones
/// row by row, and sends `output` a ``TextRowChange/draw(row:text:)`` for each row whose text differs and
/// a ``TextRowChange/clear(row:)`` for each row past the new end. It writes no escape codes: `output`
/// decides how a row is drawn (ANSI cursor moves on a terminal, a test's log, a socket).
///
/// ```swift
/// let adapter = TextListAdapter<String>(render: { "[ ] \($0)" }, output: { changes in
///     for case .draw(let row, let text) in changes { print(row, text) }
/// })
/// let controller = ListDataController(adapter: adapter)
/// controller.update(items: ["milk", "eggs"])
/// controller.update(items: ["milk", "bread"])
/// print(adapter.lastRedraw)
/// // Prints "0 [ ] milk", "1 [ ] eggs", "1 [ ] bread", "redrew 1 of 2 rows"
/// ```
///
/// - Note: Rows are positions, as on a terminal: deleting or inserting an item shifts the rows below it,
///   and those rows are redrawn when their text changes. `render` should return one line; the adapter
///   passes whatever it returns to `output` as the row's text.
public final class TextListAdapter<Item>: ListUpdateAdapter {
    /// The lines shown, one per item, in order.
    public private(set) var lines: [String] = []
    /// What the last update redrew.
    public private(set) var lastRedraw = RedrawSummary()
    private let render: (Item) -> String
    private let output: ([TextRowChange]) -> Void

    /// An adapter that renders each item with `render` and sends the rows to redraw to `output`.
    ///
    /// - Parameters:
    ///   - render: The text of an item's row.
    ///   - output: Receives the changes of one update, in ascending rows (draws first, then clears); not
    ///     called when no row changed.
    public init(render: @escaping (Item) -> String, output: @escaping ([TextRowChange]) -> Void) {
        self.render = render
        self.output = output
    }

    /// Renders every item and redraws every row (and clears the rows past the new end).
    public func reloadData(_ update: ListUpdate<Item>) {
        show(update.newItems.map(render), renderedItems: update.newItems.count, redrawingAll: true, update)
    }

    /// Renders the inserted, moved and updated items only, and redraws the rows whose text changed.
    public func performBatchUpdates(_ update: ListUpdate<Item>) {
        var rendered = 0
        let newLines = lines.applying(update.changeset) { index in
            rendered += 1
            return render(update.newItems[index])
        }
        show(newLines, renderedItems: rendered, redrawingAll: false, update)
    }

    private func show(_ newLines: [String], renderedItems: Int, redrawingAll: Bool, _ update: ListUpdate<Item>) {
        var changes: [TextRowChange] = []
        for (row, text) in newLines.enumerated() where redrawingAll || row >= lines.count || lines[row] != text {
            changes.append(.draw(row: row, text: text))
        }
        let drawn = changes.count
        for row in newLines.count..<max(lines.count, newLines.count) {
            changes.append(.clear(row: row))
        }
        update.commit()
        lines = newLines
        lastRedraw = RedrawSummary(
            redrawnRows: drawn, clearedRows: changes.count - drawn, rowCount: newLines.count,
            renderedItems: renderedItems
        )
        if !changes.isEmpty { output(changes) }
        update.finish()
    }
}

/// One row a ``TextListAdapter`` asks its output to redraw.
public enum TextRowChange: Hashable, Sendable {
    /// Row `row` (from 0) now shows `text`.
    case draw(row: Int, text: String)
    /// Row `row` is past the end of the list now: blank it.
    case clear(row: Int)
}

/// What one update of a ``TextListAdapter`` redrew.
public struct RedrawSummary: Hashable, Sendable, CustomStringConvertible {
    /// The rows drawn.
    public var redrawnRows: Int
    /// The rows blanked because the list got shorter.
    public var clearedRows: Int
    /// The rows the list has now.
    public var rowCount: Int
    /// The items rendered (calls of the adapter's `render`).
    public var renderedItems: Int

    /// A summary with these counts (all zero by default: nothing shown, nothing redrawn).
    public init(redrawnRows: Int = 0, clearedRows: Int = 0, rowCount: Int = 0, renderedItems: Int = 0) {
        self.redrawnRows = redrawnRows
        self.clearedRows = clearedRows
        self.rowCount = rowCount
        self.renderedItems = renderedItems
    }

    /// `redrew 1 of 18 rows`, followed by `, cleared 2` when rows were blanked.
    public var description: String {
        "redrew \(redrawnRows) of \(rowCount) row\(rowCount == 1 ? "" : "s")"
            + (clearedRows > 0 ? ", cleared \(clearedRows)" : "")
    }
}
