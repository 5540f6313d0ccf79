#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An SVG bar chart of the medians: one group per workload, one bar per library, time on a log scale
/// (every workload in nanoseconds per operation, so W6's milliseconds sit on the same axis), with the
/// date and machine in the caption.
func svgChart(_ results: [Result], scale: Scale, machine: Machine) -> String {
    let groups = workloadsInOrder(results).map { name in results.filter { $0.workload.name == name } }
    let medians = results.compactMap { $0.median }
    guard let low = medians.min(), let high = medians.max() else { return "" }

    // Layout, in pixels.
    let barWidth = 18.0, barGap = 3.0, groupGap = 26.0
    let left = 70.0, top = 100.0, plotHeight = 320.0  // top leaves room for the tallest bar's label
    let groupWidths = groups.map { Double($0.count) * (barWidth + barGap) - barGap }
    let width = max(900, left + groupWidths.reduce(0, +) + groupGap * Double(groups.count) + 20)
    let height = top + plotHeight + 116

    // Log axis from the decade below the fastest to the decade above the slowest.
    let lowDecade = (log10(low)).rounded(.down), highDecade = max(lowDecade + 1, (log10(high)).rounded(.up))
    func y(_ nanoseconds: Double) -> Double {
        top + plotHeight * (1 - (log10(nanoseconds) - lowDecade) / (highDecade - lowDecade))
    }

    var svg = [
        tag("rect", ["width": "100%", "height": "100%", "fill": "white"]),
        tag("text", ["x": left, "y": 20, "font-size": 15, "font-weight": "bold"],
            "Stillwater benchmarks: time per operation (median, log scale, lower is better)"),
    ]
    // Legend.
    for (index, kind) in Kind.allCases.enumerated() {
        let legendX = left + 150 * Double(index)
        svg.append(tag("rect", ["x": legendX, "y": 32, "width": 11, "height": 11, "fill": color(kind)]))
        svg.append(tag("text", ["x": legendX + 15, "y": 42], legendName(kind)))
    }
    // Grid lines and labels, one per decade.
    for decade in Int(lowDecade)...Int(highDecade) {
        let value = pow10(decade), lineY = y(value)
        svg.append(tag("line", ["x1": left, "x2": width - 10, "y1": lineY, "y2": lineY, "stroke": "#ddd"]))
        svg.append(tag("text", ["x": left - 6, "y": lineY + 4, "text-anchor": "end"], decadeLabel(decade)))
    }
    // Bars, each labelled with its median (or "n/a" where a library cannot run the workload).
    let axisY = top + plotHeight
    var x = left + groupGap / 2
    for (group, groupWidth) in zip(groups, groupWidths) {
        for result in group {
            let labelX = x + barWidth / 2 + 3
            if let median = result.median {
                let barTop = y(median)
                svg.append(tag("rect", [
                    "x": x, "y": barTop, "width": barWidth, "height": axisY - barTop,
                    "fill": color(result.contender.kind),
                ], tag("title", [:], "\(result.contender.name): \(duration(median))")))
                svg.append(tag("text", ["transform": "translate(\(rounded(labelX)),\(rounded(barTop - 4))) rotate(-90)",
                                        "font-size": 9], duration(median)))
            } else {
                svg.append(tag("text", ["transform": "translate(\(rounded(labelX)),\(rounded(axisY - 4))) rotate(-90)",
                                        "font-size": 9, "fill": "#999"], "n/a"))
            }
            x += barWidth + barGap
        }
        let workload = group[0].workload, center = x - barGap - groupWidth / 2
        svg.append(tag("text", ["x": center, "y": axisY + 16, "text-anchor": "middle", "font-weight": "bold"], workload.name))
        svg.append(tag("text", ["x": center, "y": axisY + 30, "text-anchor": "middle", "font-size": 9], workload.title))
        svg.append(tag("text", ["x": center, "y": axisY + 42, "text-anchor": "middle", "font-size": 9, "fill": "#666"],
                       "per \(workload.operation)"))
        x += groupGap
    }
    svg.append(tag("line", ["x1": left, "x2": width - 10, "y1": axisY, "y2": axisY, "stroke": "#333"]))
    // Caption: what ran, how, when and where.
    let quick = scale.divisor > 1 ? " at 1/\(scale.divisor) scale (--quick)" : ""
    let standIns = results.filter { $0.contender.kind == .stillwater && ["W4", "W5"].contains($0.workload.name) }
    let forms = standIns.map { "\($0.workload.name) as \($0.contender.name)" }.joined(separator: ", ")
    let caption = [
        "Median of \(scale.rounds) rounds\(quick), libraries interleaved, Swift release build.",
        forms.isEmpty ? nil : "Stillwater ran \(forms).",
        machine.summary,
    ].compactMap { $0 }
    for (index, line) in caption.enumerated() {
        svg.append(tag("text", ["x": left, "y": axisY + 64 + 16 * Double(index), "fill": "#333"], line))
    }
    let header = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
        + "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">"
    return ([header] + svg + ["</svg>"]).joined(separator: "\n") + "\n"
}

/// One SVG element; numbers are rounded to a tenth of a pixel, text is escaped.
private func tag(_ name: String, _ attributes: KeyValuePairs<String, Any>, _ content: String? = nil) -> String {
    let attributes = attributes.map { key, value in
        let text = (value as? Double).map(rounded) ?? escape("\(value)")
        return " \(key)=\"\(text)\""
    }.joined()
    guard let content else { return "<\(name)\(attributes)/>" }
    return "<\(name)\(attributes)>\(content.hasPrefix("<") ? content : escape(content))</\(name)>"
}

private func rounded(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return tenths % 10 == 0 ? "\(tenths / 10)" : "\(Double(tenths) / 10)"
}

private func workloadsInOrder(_ results: [Result]) -> [String] {
    var names: [String] = []
    for result in results where !names.contains(result.workload.name) { names.append(result.workload.name) }
    return names
}

private func color(_ kind: Kind) -> String {
    switch kind {
    case .stillwater: "#2a7ab0"
    case .openCombine: "#e08a2c"
    case .baseline: "#8c8c8c"
    case .limit: "#cfcfcf"
    }
}

private func legendName(_ kind: Kind) -> String {
    kind == .baseline ? "hand-written baseline" : kind.defaultName
}

/// A time in nanoseconds in the unit that suits it: "0.52 ns", "291 ns", "42.5 µs", "7.1 ms".
private func duration(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case 1e6...: number(nanoseconds / 1e6) + " ms"
    case 1e3...: number(nanoseconds / 1e3) + " µs"
    default: number(nanoseconds) + " ns"
    }
}

/// "0.1 ns", "1 ns", "10 ns", "100 ns", "1 µs", ...
private func decadeLabel(_ exponent: Int) -> String {
    let units = ["ns", "µs", "ms", "s"]
    guard exponent >= 0 else { return "0." + String(repeating: "0", count: -exponent - 1) + "1 ns" }
    let unit = min(exponent / 3, units.count - 1)
    return "1" + String(repeating: "0", count: exponent - 3 * unit) + " " + units[unit]
}

private func pow10(_ exponent: Int) -> Double {
    var value = 1.0
    for _ in 0..<abs(exponent) { value *= 10 }
    return exponent < 0 ? 1 / value : value
}

private func escape(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing("\"", with: "&quot;")
}
