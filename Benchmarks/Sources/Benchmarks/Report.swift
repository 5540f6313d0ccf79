/// The markdown report: one table of every result, then Stillwater's ratios against the targets of
/// issue 9.
func markdownReport(_ results: [Result], scale: Scale, machine: Machine) -> String {
    var lines = [
        "| workload | library | median | min | max | unit | ÷ Stillwater | ÷ baseline | allocs/op | checksum | note |",
        "|---|---|--:|--:|--:|---|--:|--:|--:|--:|---|",
    ]
    for result in results {
        let workload = result.workload
        let unit = "\(workload.unit.label)/\(workload.operation)"
        let row: [String]
        if let median = result.median, let min = result.min, let max = result.max {
            let scale = workload.unit.nanoseconds
            row = [
                number(median / scale), number(min / scale), number(max / scale), unit,
                result.contender.kind == .stillwater ? "" : ratio(median, stillwaterMedian(of: result, in: results)),
                result.contender.name == workload.reference?.name ? "" : ratio(median, referenceMedian(of: result, in: results)),
                result.allocationsPerOperation.map { number($0) } ?? "",
                result.checksum.map(String.init) ?? "",
            ]
        } else {
            row = ["–", "", "", unit, "", "", "", ""]
        }
        let note = [result.glitches.map { "glitches: \($0)" } ?? "", result.note].filter { !$0.isEmpty }
            .joined(separator: ", ")
        let cells = ["\(workload.name) \(workload.title)", result.contender.name] + row + [note]
        lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    lines += [
        "",
        "÷ Stillwater: this row's median over Stillwater's (OpenCombine 20x = Stillwater is 20 times faster).",
        "÷ baseline: this row's median over the workload's hand-written baseline (W1: the closure chain).",
        "",
        "| target (issue 9) | Stillwater vs OpenCombine | wanted | Stillwater vs baseline | wanted |",
        "|---|--:|--:|--:|--:|",
    ]
    for target in targets {
        let matching = results.filter {
            $0.contender.kind == .stillwater && workload($0.workload.name, isNamed: target.workload)
        }
        for stillwater in matching {
            guard let median = stillwater.median else { continue }
            let openCombine = results.first { $0.workload.name == stillwater.workload.name && $0.contender.kind == .openCombine }
            let faster = openCombine?.median.map { $0 / median }
            let slower = referenceMedian(of: stillwater, in: results).map { median / $0 }
            lines.append("| \(stillwater.workload.name) \(stillwater.workload.title) | "
                + verdict(faster, target.fasterThanOpenCombine, higherIsBetter: true) + " | "
                + (target.fasterThanOpenCombine.map { "≥ \(number($0))x" } ?? "–") + " | "
                + verdict(slower, target.withinBaseline, higherIsBetter: false) + " | "
                + (target.withinBaseline.map { "≤ \(number($0))x" } ?? "–") + " |")
        }
    }
    lines += ["", "\(scale.rounds) rounds, libraries interleaved, median; \(machine.summary)."]
    return lines.joined(separator: "\n") + "\n"
}

/// Whether `name` is `selector` or one of its sizes: "W6" selects "W6 10k" but "W5" does not select "W5b".
func workload(_ name: String, isNamed selector: String) -> Bool {
    let name = name.lowercased(), selector = selector.lowercased()
    return name == selector || name.hasPrefix(selector + " ")
}

/// Issue 9's bar for each workload (W6 covers both sizes); W7's, W8's and W9's come from the issues that
/// added them (W8, issue 15, and W9, issue 16, set none against the baseline).
private let targets: [(workload: String, fasterThanOpenCombine: Double?, withinBaseline: Double?)] = [
    ("W1", 20, 3), ("W2", 4, 1.5), ("W3", 8, 3), ("W4", 10, 2), ("W5", 4, 1.5), ("W5b", 10, 2), ("W6", nil, 2),
    ("W7", 20, 2), ("W8", 10, nil), ("W9", 10, nil),
]

private func verdict(_ value: Double?, _ bound: Double?, higherIsBetter: Bool) -> String {
    guard let value else { return "–" }
    guard let bound else { return "\(number(value))x" }
    let met = higherIsBetter ? value >= bound : value <= bound
    return "\(number(value))x \(met ? "✓" : "✗")"
}

private func stillwaterMedian(of result: Result, in results: [Result]) -> Double? {
    results.first { $0.workload.name == result.workload.name && $0.contender.kind == .stillwater }?.median
}

private func referenceMedian(of result: Result, in results: [Result]) -> Double? {
    guard let reference = result.workload.reference else { return nil }
    return results.first { $0.workload.name == result.workload.name && $0.contender.name == reference.name }?.median
}

private func ratio(_ numerator: Double, _ denominator: Double?) -> String {
    guard let denominator, denominator > 0 else { return "" }
    return number(numerator / denominator) + "x"
}

/// A number for people: three significant digits below 100, whole numbers with thin-space groups above.
func number(_ value: Double) -> String {
    switch abs(value) {
    case 100...: return grouped(Int(value.rounded()))
    case 10...: return fixed(value, decimals: 1)
    case 1...: return fixed(value, decimals: 2)
    case 0: return "0"
    default: return fixed(value, decimals: 3)
    }
}

private func fixed(_ value: Double, decimals: Int) -> String {
    var factor = 1
    for _ in 0..<decimals { factor *= 10 }
    let scaled = Int((abs(value) * Double(factor)).rounded())
    let fraction = String(scaled % factor)
    let padded = String(repeating: "0", count: decimals - fraction.count) + fraction
    return (value < 0 ? "-" : "") + "\(scaled / factor).\(padded)"
}

private func grouped(_ value: Int) -> String {
    var digits = String(abs(value))
    var groups: [Substring] = []
    while digits.count > 3 {
        groups.insert(Substring(digits.suffix(3)), at: 0)
        digits.removeLast(3)
    }
    groups.insert(Substring(digits), at: 0)
    return (value < 0 ? "-" : "") + groups.joined(separator: "\u{2009}")
}
