import Foundation
import Stillwater

/// One line of the interactive screen: its text and how it is styled.
public struct ScreenLine: Equatable, Sendable {
    /// How a line is drawn.
    public enum Style: Sendable {
        /// Normal text.
        case plain
        /// The title line at the top.
        case header
        /// The row under the cursor.
        case selected
        /// The status line and the help line.
        case dim
        /// A problem the user must see (a failed save, a notice).
        case warning
    }

    /// The text, already cut to the screen's width in terminal columns.
    public var text: String
    /// The style.
    public var style: Style

    /// A line showing `text` in `style`.
    public init(_ text: String, style: Style = .plain) {
        self.text = text
        self.style = style
    }
}

/// What the screen asks the terminal to do.
public enum ScreenWrite: Equatable, Sendable {
    /// Blank the whole screen (before a full redraw).
    case clear
    /// Show `line` on row `row` (from 0), replacing what the row showed.
    case line(row: Int, ScreenLine)
}

/// The interactive todo screen, without the terminal: it takes keys and a size, and writes lines.
///
/// Layout, top to bottom: a header (`Stillwater todo · 2 of 5 left`; only the count when the title does
/// not fit), the list, a blank row, the status (`redrew 1 of 18 rows · item 3 is done`), and the help
/// line, which becomes the line editor while an item is being added or edited. The status wraps over as
/// many rows as it needs, taken from the list (which keeps at least one row), so a long message, like why
/// a save failed, is read whole, not cut; only beyond that is its last row cut, with `…`. The `?` page
/// (in two aligned columns, or one on a narrow screen) and a notice (``showNotice(_:)``) take the list's
/// place, wrapped to the width and paged, until a key leaves them.
///
/// Any size from ``minimumWidth`` × ``minimumHeight`` up is laid out whole; a smaller window shows only
/// `window too small` and the size it needs, until it is made larger.
///
/// Every width is counted in terminal columns (``Swift/Character/terminalColumns``), so titles in CJK or
/// with emoji are cut to the row, never wrapped by the terminal over the next one.
///
/// Every row of the screen sits behind its own ``RenderGate``, so a row is written to the terminal only
/// when its text or style changed. The list's rows are found by a ``RowListView``: the session's rows are
/// diffed, only inserted, moved and changed items are rendered, and only lines whose text changed are
/// handed to their gates. Keys pressed on a row call that row's ``RowHandles``.
///
/// ```swift
/// var written: [Int: String] = [:]
/// let session = TodoSession(TodoList(titles: ["milk", "eggs"]), showsCursor: true)
/// let screen = TodoScreen(session: session, width: 40, height: 8) { write in
///     if case .line(let row, let line) = write { written[row] = line.text }
/// }
/// screen.handle(.down)
/// print(written[1]!, "|", written[2]!, "|", written[6]!)
/// // Prints "   1. [ ] milk | >  2. [ ] eggs | redrew 2 of 2 rows"
/// ```
///
/// Not thread-safe: call it from the thread that reads the keys.
public final class TodoScreen {
    /// What the screen is doing.
    public enum Mode: Equatable, Sendable {
        /// Moving through the list.
        case browsing
        /// Typing a new item.
        case adding(LineEditor)
        /// Editing the title of the item with identity `id`.
        case editing(id: Int, LineEditor)
        /// Showing every key, on pages as long as the list area (from 0).
        case help(page: Int)
        /// Showing a notice (see ``TodoScreen/showNotice(_:)``), on pages as long as the list area.
        case notice(page: Int)
        /// Typing the path of another file to save the list to.
        case savingAs(LineEditor)
        /// Asking whether to quit with changes that could not be saved.
        case confirmingQuit
    }

    private let session: TodoSession
    private let output: (ScreenWrite) -> Void
    private let title: String
    private var gates: [RenderGate<ScreenLine>] = []
    private var listView: RowListView!
    /// The screen's observations of the session (its rows, its saving, its renumberings).
    private let subscriptions = SubscriptionBag()
    private var scrollOffset = 0
    /// How many rows the status takes (at least one); the list gets what is left.
    private var statusHeight = 1
    private var message = ""
    /// A message the last key produced that outranks a standing save problem on the status line (why
    /// saving elsewhere failed, say); cleared by the next key.
    private var alert: String?
    private var notice = ""
    private var redraw: RedrawSummary?
    /// Whether ``handle(_:)`` is running: it draws the status once, at its end.
    private var isHandlingKey = false

    /// The narrowest screen laid out whole, in columns; a narrower one says `window too small`.
    public static let minimumWidth = 20
    /// The lowest screen laid out whole, in rows (a header, one row of the list, a blank row, one row
    /// of status, the help line); a lower one says `window too small`.
    public static let minimumHeight = 5

    /// The screen's width, in terminal columns.
    public private(set) var width: Int
    /// The screen's height, in rows.
    public private(set) var height: Int
    /// What the screen is doing.
    public private(set) var mode: Mode = .browsing

    /// A screen of `width` columns × `height` rows over `session` (which should show its cursor), writing
    /// to `output`. It draws everything at once.
    ///
    /// - Parameter title: The start of the header line.
    public init(
        session: TodoSession, width: Int, height: Int, title: String = "Stillwater todo",
        output: @escaping (ScreenWrite) -> Void
    ) {
        self.session = session
        self.output = output
        self.title = title
        self.width = width
        self.height = height
        listView = RowListView { [unowned self] changes in draw(changes) }
        layOut()
        session.rows.observe { [unowned self] rows in show(rows) }.store(in: subscriptions)
        message = "? shows every key"
        drawChrome()
        // A delayed save ends between keys: its outcome (a failure, a merge) reaches the status line then.
        // A save made during a key waits for the key's end, when the rows it changed have been shown.
        session.saving.state.changes.observe { [unowned self] _ in
            if !isHandlingKey { drawChrome() }
        }.store(in: subscriptions)
        // A merge that renumbered the item being edited: the edit follows the item, not its old number.
        session.renumberings.observe { [unowned self] renumbered in
            if case .editing(let id, let editor) = mode, let new = renumbered[id] { mode = .editing(id: new, editor) }
        }.store(in: subscriptions)
    }

    /// The row and column (from 0) where the terminal should show its cursor: in the line editor while
    /// editing, `nil` (hidden) otherwise.
    public var cursorPosition: (row: Int, column: Int)? {
        guard let (prompt, editor) = editorState, isLargeEnough else { return nil }
        return (height - 1, editor.visibleLine(prompt: prompt, width: width).cursorColumn)
    }

    /// What the last change of the list redrew (`redrew 1 of 18 rows`; `redrew 0 of 18 rows` after a key
    /// on the rows that changed none), as the status line shows it; `nil` after the screen was drawn whole
    /// (Ctrl-L, a resize, leaving a page), until the next change.
    public var lastRedraw: RedrawSummary? { redraw }

    /// Handles one key.
    ///
    /// - Returns: `false` when the key asks to quit, `true` otherwise.
    @discardableResult
    public func handle(_ key: Key) -> Bool {
        isHandlingKey = true
        defer { isHandlingKey = false }
        alert = nil
        switch mode {
        case .help(let page), .notice(let page):
            switch key {
            case .down, .character("j"), .character(" "), .pageDown:
                if page + 1 < pageCount { showPage(page + 1) } else { leavePage() }
            case .up, .character("k"), .pageUp:
                showPage(max(page - 1, 0))
            default:
                leavePage()
            }
        case .adding(var editor):
            let outcome = editor.handle(key)
            mode = .adding(editor)
            finishEditing(outcome, editor.text) { title in
                reportingRedraw {
                    guard let added = session.addItem(title) else { return "nothing added: the title was empty" }
                    session.selection.value = TodoSelection(id: added.id, index: session.rows.value.count)
                    return "added \"\(added.title)\""
                        + (session.rows.value.contains { $0.item.id == added.id } ? "" : " (hidden by the filter)")
                }
            }
        case .editing(let id, var editor):
            let outcome = editor.handle(key)
            mode = .editing(id: id, editor)
            finishEditing(outcome, editor.text) { title in
                reportingRedraw {
                    guard let row = session.rows.value.first(where: { $0.item.id == id }) else { return "the item is gone" }
                    guard !TodoItem.cleanTitle(title).isEmpty else { return "not changed: the title was empty" }
                    row.rename(to: title)
                    return "renamed to \"\(TodoItem.cleanTitle(title))\""
                }
            }
        case .savingAs(var editor):
            let outcome = editor.handle(key)
            mode = .savingAs(editor)
            finishEditing(outcome, editor.text) { path in
                do {
                    try session.save(to: (path.trimmingWhitespace() as NSString).expandingTildeInPath)
                    return "now saving to \(session.file?.path ?? path)"
                } catch {
                    alert = "not saved to \(path.trimmingWhitespace()): \(error)"
                    return alert!
                }
            }
        case .confirmingQuit:
            mode = .browsing
            switch Keymap.command(for: key) {
            case .quit?: return false
            case .saveAs?: run(.saveAs)
            default:
                message = "not quitting"
                alert = "not quitting · w saves elsewhere · q quits and loses the changes"
            }
        case .browsing:
            guard let command = Keymap.command(for: key) else {
                if case .unknown = key {} else { message = "\(key) does nothing here; ? shows every key" }
                break
            }
            if command == .quit {
                // A change whose save waits is saved first; only one that cannot be saved is asked about.
                session.saveNow()
                guard session.hasUnsavedChanges else { return false }
                mode = .confirmingQuit
                message = "not saved: q quits and loses the changes · w saves elsewhere · other keys stay"
                break
            }
            if Self.worksOnRows(command) { reportingRedraw { run(command) } } else { run(command) }
        }
        drawChrome()
        return true
    }

    /// Adapts the layout to a new size and draws everything again.
    public func resize(width: Int, height: Int) {
        guard width != self.width || height != self.height else { return }
        self.width = width
        self.height = height
        statusHeight = min(statusHeight, max(1, height - 4))
        layOut()
        output(.clear)
        show(session.rows.value)
        redraw = nil
        drawBody()
        drawChrome()
    }

    /// Shows `message` in the status line until the next key replaces it. A message wider than the
    /// screen wraps over more rows (the list gives them up); one longer than the screen can hold is cut,
    /// so use ``showNotice(_:)`` for a long text that must be read whole.
    public func announce(_ message: String) {
        self.message = message
        drawChrome()
    }

    /// Shows `notice` whole in the list area, wrapped to the width (and paged when it is longer than
    /// the area), until a key dismisses it: for a warning the user must read, like a file set aside.
    ///
    /// ```swift
    /// var rows: [Int: String] = [:]
    /// let screen = TodoScreen(session: TodoSession(showsCursor: true), width: 24, height: 8) { write in
    ///     if case .line(let row, let line) = write { rows[row] = line.text }
    /// }
    /// screen.showNotice("/home/me/todo.json was set aside")
    /// print(rows[1]!, "|", rows[2]!, "|", rows[3]!)
    /// // Prints "Notice: | /home/me/todo.json was | set aside"
    /// ```
    public func showNotice(_ notice: String) {
        self.notice = notice
        mode = .notice(page: 0)
        showPage(0)
        drawChrome()
    }

    /// Clears the terminal and writes every row again (after something else drew over it).
    public func repaint() {
        output(.clear)
        for gate in gates { gate.invalidate() }
        redraw = nil
        drawBody()
        drawChrome()
    }

    // MARK: Commands

    private var selectedIndex: Int? {
        session.rows.value.firstIndex { $0.isSelected }
    }

    private func run(_ command: ScreenCommand) {
        let rows = session.rows.value
        switch command {
        case .cursorUp, .cursorDown, .cursorFirst, .cursorLast:
            guard let index = selectedIndex else {
                message = "the list is empty; press a to add an item"
                return
            }
            let target = switch command {
            case .cursorUp: max(index - 1, 0)
            case .cursorDown: min(index + 1, rows.count - 1)
            case .cursorFirst: 0
            default: rows.count - 1
            }
            message = ""
            session.selection.value = TodoSelection(id: rows[target].item.id, index: target)
        case .toggle, .edit, .delete, .moveUp, .moveDown:
            guard let index = selectedIndex else {
                message = "no item selected; press a to add one"
                return
            }
            runRowCommand(command, on: rows[index], at: index, count: rows.count)
        case .add:
            mode = .adding(LineEditor())
            message = "type the new item; Enter adds it, Esc cancels"
        case .filter:
            session.filter.value = session.filter.value.next
            message = "showing \(session.filter.value.rawValue) items"
        case .undo:
            message = session.undo() ? "undid the last change" : "nothing to undo"
        case .redo:
            message = session.redo() ? "redid the last undone change" : "nothing to redo"
        case .help:
            mode = .help(page: 0)
            showPage(0)
        case .redraw:
            repaint()
            message = "drew the whole screen again"
        case .saveAs:
            mode = .savingAs(LineEditor())
            message = "type the path of a new file; Enter saves, Esc cancels"
        case .quit:
            break
        }
    }

    private func runRowCommand(_ command: ScreenCommand, on row: TodoRow, at index: Int, count: Int) {
        // Pin the cursor's fallback to this row, so it stays here if the item goes away or is hidden.
        session.selection.value = TodoSelection(id: row.item.id, index: index)
        switch command {
        case .toggle:
            row.toggle()
            message = "\"\(row.item.title)\" is \(row.item.isDone ? "not done" : "done")"
        case .delete:
            row.delete()
            message = "deleted \"\(row.item.title)\"; u brings it back"
        case .moveUp where index == 0, .moveDown where index == count - 1:
            message = "\"\(row.item.title)\" is already at the \(command == .moveUp ? "top" : "bottom")"
        case .moveUp, .moveDown:
            row.move(command == .moveUp ? .up : .down)
            message = "moved \"\(row.item.title)\" \(command == .moveUp ? "up" : "down")"
        default:
            mode = .editing(id: row.item.id, LineEditor(text: row.item.title))
            message = "edit the title; Enter saves, Esc cancels"
        }
    }

    /// Whether `command` works on the rows (the cursor, a row, the filter, undo and redo), so that the
    /// status line says what it redrew, if only `redrew 0 of 3 rows`.
    private static func worksOnRows(_ command: ScreenCommand) -> Bool {
        switch command {
        case .cursorUp, .cursorDown, .cursorFirst, .cursorLast, .toggle, .edit, .delete, .moveUp, .moveDown,
             .filter, .undo, .redo: true
        case .add, .help, .redraw, .saveAs, .quit: false
        }
    }

    /// Runs `body`, a key's work on the rows; when the rows came out as they were (the session tells the
    /// screen only of rows that changed), the status line says the key redrew none of them.
    private func reportingRedraw<Result>(_ body: () -> Result) -> Result {
        let shows = listView.showCount
        let result = body()
        if listView.showCount == shows { redraw = RedrawSummary(rowCount: listView.rows.count) }
        return result
    }

    private func finishEditing(_ outcome: LineEditor.Outcome, _ text: String, submit: (String) -> String) {
        switch outcome {
        case .editing: return
        case .cancel: message = "cancelled"
        case .submit: message = submit(text)
        }
        mode = .browsing
    }

    // MARK: Drawing

    private var isLargeEnough: Bool { width >= Self.minimumWidth && height >= Self.minimumHeight }
    /// The rows of the list area: what the header, the blank row, the status and the help line leave.
    private var listHeight: Int { isLargeEnough ? max(1, height - 3 - statusHeight) : 0 }

    private var editorState: (prompt: String, editor: LineEditor)? {
        switch mode {
        case .adding(let editor): ("add: ", editor)
        case .editing(_, let editor): ("edit: ", editor)
        case .savingAs(let editor): ("save to: ", editor)
        case .browsing, .help, .notice, .confirmingQuit: nil
        }
    }

    /// Makes one gate per screen row.
    private func layOut() {
        gates = (0..<max(height, 0)).map { row in
            RenderGate<ScreenLine> { [output] line in output(.line(row: row, line)) }
        }
    }

    /// Shows the window of `rows` that holds the cursor.
    private func show(_ rows: [TodoRow]) {
        let selected = rows.firstIndex { $0.isSelected } ?? 0
        if selected < scrollOffset { scrollOffset = selected }
        if selected >= scrollOffset + listHeight { scrollOffset = selected - listHeight + 1 }
        scrollOffset = max(0, min(scrollOffset, rows.count - listHeight))
        let window = Array(rows.dropFirst(scrollOffset).prefix(listHeight))
        redraw = listView.show(window)
        if !isShowingPage { drawEmptyHint() }
    }

    /// Whether the list area shows a page (the help or a notice) instead of the list.
    private var isShowingPage: Bool {
        switch mode {
        case .help, .notice: true
        case .browsing, .adding, .editing, .savingAs, .confirmingQuit: false
        }
    }

    /// Hands the lines the list view found changed to their gates.
    private func draw(_ changes: [TextRowChange]) {
        if isShowingPage { return }
        for change in changes {
            switch change {
            case .draw(let row, let text): drawListLine(row, text)
            case .clear(let row): drawListLine(row, "")
            }
        }
    }

    private func drawListLine(_ row: Int, _ text: String) {
        guard row < listHeight else { return }
        gates[1 + row].update(ScreenLine(clip(text), style: text.hasPrefix(">") ? .selected : .plain))
    }

    /// Feeds every list row its current line (after the help page, or a repaint).
    private func syncListLines() {
        let lines = listView.lines
        for row in 0..<listHeight { drawListLine(row, row < lines.count ? lines[row] : "") }
        drawEmptyHint()
    }

    private func drawEmptyHint() {
        guard listHeight > 0, listView.lines.isEmpty else { return }
        let filter = session.filter.value
        let hint = session.list.items.isEmpty
            ? "   nothing to do: press a to add an item"
            : "   no \(filter.rawValue) items: press f to change the filter"
        gates[1].update(ScreenLine(clip(hint), style: .dim))
    }

    /// Draws the list area again: the page shown, or the list.
    private func drawBody() {
        switch mode {
        case .help(let page), .notice(let page): showPage(page)
        case .browsing, .adding, .editing, .savingAs, .confirmingQuit: syncListLines()
        }
    }

    private func leavePage() {
        mode = .browsing
        message = ""
        redraw = nil
        syncListLines()
    }

    /// The lines of the page shown (the help or the notice), wrapped to the width.
    private var pageLines: [ScreenLine] {
        switch mode {
        case .help:
            [ScreenLine("Keys:", style: .header)]
                + Keymap.reference(width: width, indent: 2).map { ScreenLine($0) }
        case .notice:
            [ScreenLine("Notice:", style: .header)]
                + notice.wrapped(toColumns: width).map { ScreenLine($0, style: .warning) }
        case .browsing, .adding, .editing, .savingAs, .confirmingQuit:
            []
        }
    }

    private var pageCount: Int {
        max(1, (pageLines.count + listHeight - 1) / max(listHeight, 1))
    }

    /// Shows page `page` (clamped to the pages) of the help or the notice in the list area.
    private func showPage(_ page: Int) {
        let lines = pageLines
        let pages = pageCount
        let page = min(page, pages - 1)
        let name: String
        switch mode {
        case .notice: mode = .notice(page: page); name = "notice"
        default: mode = .help(page: page); name = "help"
        }
        let shown = lines.dropFirst(page * listHeight)
        for row in 0..<listHeight {
            let line = row < shown.count ? shown[shown.startIndex + row] : ScreenLine("")
            gates[1 + row].update(ScreenLine(clip(line.text), style: line.style))
        }
        message = pages == 1
            ? "any key goes back"
            : "\(name) \(page + 1)/\(pages) · Space: more · ↑: back · other keys: leave"
    }

    /// Draws the header, the status and the help line or the editor; when the status needs another
    /// number of rows than it has, lays the list area out again first.
    private func drawChrome() {
        guard isLargeEnough else { return drawTooSmall() }
        var status = statusLines()
        // Laying the list out again can change the status (a page's count of pages): twice settles it.
        for _ in 0..<2 where status.count != statusHeight {
            statusHeight = status.count
            layOutList()
            status = statusLines()
        }
        let top = height - 1 - statusHeight
        gates[0].update(ScreenLine(header, style: .header))
        gates[top - 1].update(ScreenLine(""))
        for row in 0..<statusHeight {
            gates[top + row].update(row < status.count ? status[row] : ScreenLine(""))
        }
        if let (prompt, editor) = editorState {
            gates[height - 1].update(ScreenLine(editor.visibleLine(prompt: prompt, width: width).text))
        } else {
            gates[height - 1].update(ScreenLine(Keymap.helpLine(width: width), style: .dim))
        }
    }

    /// The header: the title and the summary, or the summary alone when both do not fit.
    private var header: String {
        let full = "\(title) · \(session.summary)"
        return full.terminalColumns <= width ? full : clip(session.summary)
    }

    /// The status, wrapped to the width over at most the rows the list can give up (it keeps one); the
    /// last row is cut, with `…`, only when even those are too few.
    private func statusLines() -> [ScreenLine] {
        let (text, style) = statusText
        let lines = text.wrapped(toColumns: width)
        let rows = max(1, height - 4)
        guard lines.count > rows else { return lines.map { ScreenLine($0, style: style) } }
        let rest = lines[(rows - 1)...].joined(separator: " ")
        return (lines.prefix(rows - 1) + [rest.clipped(toColumns: width)]).map { ScreenLine($0, style: style) }
    }

    /// What the status says, and how: the question before quitting, an alert, how to turn the pages of
    /// the page shown, a failed save (the way out first), or what the last key and the last redraw did,
    /// with a merge's notice.
    private var statusText: (String, ScreenLine.Style) {
        if mode == .confirmingQuit { return (message, .warning) }
        if let alert { return (alert, .warning) }
        // A page says how to turn its pages; a failed save's warning is back as soon as the page is left.
        if isShowingPage { return (message, .dim) }
        if let problem = session.saveProblem.value { return ("w saves elsewhere · " + problem, .warning) }
        let note = session.mergeNotice.value.map { message.isEmpty ? $0 : "\(message) · \($0)" } ?? message
        return ([redraw?.description ?? "", note].filter { !$0.isEmpty }.joined(separator: " · "), .dim)
    }

    /// Fits the list (or the page shown) to the rows the status left it, keeping what the status says
    /// of the last redraw.
    private func layOutList() {
        let summary = redraw
        show(session.rows.value)
        redraw = summary
        drawBody()
    }

    /// Below the smallest size: says so, and what size is needed, over the rows there are (in fewer
    /// words when the full sentence does not fit).
    private func drawTooSmall() {
        let needed = "\(Self.minimumWidth)×\(Self.minimumHeight)"
        let texts = [
            "window too small (\(width)×\(height)): make it at least \(needed)",
            "too small: \(width)×\(height), needs \(needed)",
            "needs \(needed)",
        ]
        let wrapped = texts.map { $0.wrapped(toColumns: width) }
        let lines = wrapped.first { $0.count <= gates.count } ?? wrapped.last!
        for (row, gate) in gates.enumerated() {
            let line = row == gates.count - 1 && lines.count > gates.count
                ? lines[row...].joined(separator: " ").clipped(toColumns: width)
                : row < lines.count ? lines[row].clipped(toColumns: width) : ""
            gate.update(ScreenLine(line, style: .warning))
        }
    }

    /// `text` cut to the screen's width in terminal columns.
    private func clip(_ text: String) -> String {
        text.clipped(toColumns: width)
    }
}
