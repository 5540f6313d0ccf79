import Stillwater

/// The piped mode of `todo`: runs one command per line, prints what each did, the list after each change,
/// and how many rows the change redrew. A quiet runner prints only what each command did.
///
/// ```swift
/// let session = TodoSession()
/// let runner = PipedRunner(session: session, output: { print($0) }, errors: { print("error:", $0) })
/// runner.run(lines: ["add milk", "toggle 1", "toggle 7"])
/// // Prints "added \"milk\" as item 1", "   1. [ ] milk", "redrew 1 of 1 row · 1 of 1 left",
/// //        "item 1 \"milk\" is done", "   1. [x] milk", "redrew 1 of 1 row · 0 of 1 left",
/// //        "error: line 3: there is no item 7: the list shows only item 1"
/// ```
///
/// The list is drawn through a ``RowListView`` that observes the session's rows, exactly as the
/// interactive screen draws it, so the counts are the ones the screen would show.
public final class PipedRunner {
    private let session: TodoSession
    private let output: (String) -> Void
    private let errors: (String) -> Void
    private let view = RowListView { _ in }
    private let subscription: Subscription
    private var lineNumber = 0
    private let isQuiet: Bool

    /// How many lines failed so far (refused commands, and changes that could not be saved).
    public private(set) var failures = 0

    /// A runner over `session` that prints to `output` and reports problems to `errors`.
    ///
    /// - Parameter quiet: Print only the one-line outcome of each command (`todo --quiet`), not the list
    ///   and the redraw count after each change; `list` and `help` still print what they are asked for.
    ///
    /// ```swift
    /// let runner = PipedRunner(session: TodoSession(), quiet: true, output: { print($0) }, errors: { print($0) })
    /// runner.run(lines: ["add milk", "done 1", "done 1"])
    /// // Prints "added \"milk\" as item 1", "item 1 \"milk\" is done", "item 1 \"milk\" is already done"
    /// ```
    public init(
        session: TodoSession, quiet: Bool = false,
        output: @escaping (String) -> Void, errors: @escaping (String) -> Void
    ) {
        self.session = session
        self.isQuiet = quiet
        self.output = output
        self.errors = errors
        subscription = session.rows.observe { [view] rows in view.show(rows) }
    }

    /// Runs every line of `lines` until the end or a `quit`.
    ///
    /// - Returns: The exit status: 0 when every line worked, 1 otherwise.
    @discardableResult
    public func run(lines: some Sequence<String>) -> Int32 {
        for line in lines where !run(line) { break }
        return failures == 0 ? 0 : 1
    }

    /// Runs one line.
    ///
    /// - Returns: `false` after `quit`, `true` otherwise (also after a refused line).
    @discardableResult
    public func run(_ line: String) -> Bool {
        lineNumber += 1
        let updatesBefore = view.showCount
        let listBefore = session.list
        do {
            guard let command = try TodoCommand.parse(line) else { return true }
            switch try session.perform(command) {
            case .changed(let message):
                reportSaved(message, listChanged: session.list != listBefore)
                if !isQuiet {
                    let unchanged = RedrawSummary(rowCount: view.rows.count)
                    printList(redraw: view.showCount == updatesBefore ? unchanged : view.lastRedraw)
                }
            case .unchanged(let message):
                output(message)
            case .list:
                printList(redraw: nil)
            case .help:
                output(TodoCommand.reference)
            case .quit:
                return false
            }
        } catch {
            failures += 1
            errors("line \(lineNumber): \(error.message)")
        }
        return true
    }

    private func printList(redraw: RedrawSummary?) {
        let lines = view.lines
        if lines.isEmpty {
            let filter = session.filter.value
            output(filter == .all ? "   (no items)" : "   (no \(filter.rawValue) items)")
        } else {
            for line in lines { output(line) }
        }
        output((redraw.map { "\($0) · " } ?? "") + session.summary)
    }

    /// Prints what a change did, and whether it reached the file: a failed save is reported on the line
    /// whose change it failed to save (and counts as a failure), and so is a merge of another program's
    /// change. A line that changed only the view (a filter) saved nothing and reports neither.
    private func reportSaved(_ message: String, listChanged: Bool) {
        guard listChanged else {
            output(message)
            return
        }
        guard let problem = session.saveProblem.value else {
            output(message)
            if let notice = session.mergeNotice.value { output(notice) }
            return
        }
        failures += 1
        output("\(message), in memory only")
        errors("line \(lineNumber): \(problem)")
    }
}
