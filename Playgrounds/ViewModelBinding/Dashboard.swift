import Stillwater

/// The dashboard's output: one line per derived value, written as text, each behind a `RenderGate`, so
/// a line is rewritten only when its text changed (a new latency that is still "fast" is not).
///
/// On a terminal the lines stay in place and are rewritten where they stand; in a pipe each rewrite is
/// printed as a log line, so the output can be read (and diffed) afterwards.
final class Dashboard {
    /// One line: a label, a gate, and how many values were offered to the gate.
    private final class Line {
        let label: String
        let gate: RenderGate<String>
        var offered = 0

        init(label: String, gate: RenderGate<String>) {
            self.label = label
            self.gate = gate
        }
    }

    private let inPlace: Bool
    private var lines: [Line] = []
    private let subscriptions = SubscriptionBag()

    /// A dashboard that rewrites lines in place (`inPlace`, for a terminal) or prints a log.
    init(inPlace: Bool) {
        self.inPlace = inPlace
    }

    /// Adds a line showing every value of `values` as `text` writes it. Call in the order the lines
    /// should appear.
    func add<Value>(
        _ label: String, _ values: some ObservableType<Value>, text: @escaping (Value) -> String,
        onValue: @escaping () -> Void = {}
    ) {
        let row = lines.count
        let line = Line(label: label, gate: RenderGate { [unowned self] text in draw(row: row, label: label, text: text) })
        lines.append(line)
        if inPlace { print("") }
        values.observe { [unowned line] value in
            line.offered += 1
            line.gate.update(text(value))
            onValue()
        }
        .store(in: subscriptions)
    }

    /// Prints a line of commentary (in place: above the dashboard is not possible, so only in the log).
    func note(_ text: String) {
        if !inPlace { print(text) }
    }

    private func draw(row: Int, label: String, text: String) {
        let padded = label.padding(toLength: 14, withPad: " ", startingAt: 0)
        if inPlace {
            // Up to the line's row, rewrite it, and back down below the dashboard.
            let up = lines.count - row
            print("\u{1B}[\(up)A\r\u{1B}[2K  \(padded)\(text)\u{1B}[\(up)B\r", terminator: "")
        } else {
            print("  \(padded)\(text)")
        }
    }

    /// The closing table: per line, how many values arrived, how many were drawn, how many the gate
    /// skipped; and the totals.
    func report() -> String {
        var rows = ["line          values  drawn  skipped"]
        for line in lines {
            let skipped = line.offered - line.gate.renderCount
            rows.append(line.label.padding(toLength: 12, withPad: " ", startingAt: 0)
                + Self.right(line.offered, 8) + Self.right(line.gate.renderCount, 7) + Self.right(skipped, 9))
        }
        let offered = lines.reduce(0) { $0 + $1.offered }
        let drawn = lines.reduce(0) { $0 + $1.gate.renderCount }
        rows.append("total       " + Self.right(offered, 8) + Self.right(drawn, 7) + Self.right(offered - drawn, 9))
        rows.append("updates made: \(drawn), skipped: \(offered - drawn)")
        return rows.joined(separator: "\n")
    }

    private static func right(_ number: Int, _ width: Int) -> String {
        let text = String(number)
        return String(repeating: " ", count: max(width - text.count, 0)) + text
    }
}
