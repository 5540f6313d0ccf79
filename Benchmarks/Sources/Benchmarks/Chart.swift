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
    let left = 70.0, top = 56.0, plotHeight = 320.0
    let groupWidths = groups.map { Double($0.count) * (barWidth + barGap) - barGap }
    let width = left + groupWidths.reduce(0, +) + groupGap * Double(groups.count) + 20
    let height = top + plotHeight + 100

    // Log axis from the decade below the fastest to the decade above the slowest.
    let lowDecade = (log10(low)).rounded(.down), highDecade = max(lowDecade + 1, (log10(high)).rounded(.up))
    func y(_ nanoseconds: Double) -> Double {
        top + plotHeight * (1 - (log10(nanoseconds) - lowDecade) / (highDecade - lowDecade))
    }

    var svg = [
        #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="11">"#,
        #"<rect width="100%" height="100%" fill="white"/>"#,
        #"<text x="\#(left)" y="20" font-size="15" font-weight="bold">Stillwater benchmarks: time per operation (median, log scale, lower is better)</text>"#,
    ]
    // Legend.
    var legendX = left
    for kind in Kind.allCases {
        svg.append(#"<rect x="\#(legendX)" y="32" width="11" height="11" fill="\#(color(kind))"/>"#)
        svg.append(#"<text x="\#(legendX + 15)" y="42">\#(legendName(kind))</text>"#)
        legendX += 150
    }
    // Grid lines and labels, one per decade.
    for decade in Int(lowDecade)...Int(highDecade) {
        let value = pow10(decade), lineY = y(value)
        svg.append(#"<line x1="\#(left)" x2="\#(width - 10)" y1="\#(lineY)" y2="\#(lineY)" stroke="#ddd"/>"#)
        svg.append(#"<text x="\#(left - 6)" y="\#(lineY + 4)" text-anchor="end">\#(duration(value))</text>"#)
    }
    // Bars.
    var x = left + groupGap / 2
    for (group, groupWidth) in zip(groups, groupWidths) {
        for result in group {
            if let median = result.median {
                let barTop = y(median)
                svg.append(#"<rect x="\#(x)" y="\#(barTop)" width="\#(barWidth)" height="\#(top + plotHeight - barTop)" fill="\#(color(result.contender.kind))"><title>\#(escape(result.contender.name)): \#(duration(median))</title></rect>"#)
                svg.append(#"<text transform="translate(\#(x + barWidth / 2 + 3),\#(barTop - 4)) rotate(-90)" font-size="9">\#(duration(median))</text>"#)
            } else {
                svg.append(#"<text transform="translate(\#(x + barWidth / 2 + 3),\#(top + plotHeight - 4)) rotate(-90)" font-size="9" fill="#999">n/a</text>"#)
            }
            x += barWidth + barGap
        }
        let workload = group[0].workload, center = x - barGap - groupWidth / 2
        svg.append(#"<text x="\#(center)" y="\#(top + plotHeight + 16)" text-anchor="middle" font-weight="bold">\#(workload.name)</text>"#)
        svg.append(#"<text x="\#(center)" y="\#(top + plotHeight + 30)" text-anchor="middle" font-size="9">\#(escape(workload.title))</text>"#)
        svg.append(#"<text x="\#(center)" y="\#(top + plotHeight + 42)" text-anchor="middle" font-size="9" fill="#666">per \#(workload.operation)</text>"#)
        x += groupGap
    }
    svg.append(#"<line x1="\#(left)" x2="\#(width - 10)" y1="\#(top + plotHeight)" y2="\#(top + plotHeight)" stroke="#333"/>"#)
    // Caption: what ran, when, where.
    let stand = results.first { $0.contender.kind == .stillwater && $0.workload.name == "W5" }?.contender.name
    svg.append(#"<text x="\#(left)" y="\#(height - 36)" fill="#333">Median of \#(scale.rounds) interleaved rounds\#(scale.divisor > 1 ? " at 1/\(scale.divisor) scale (--quick)" : ""), release build. \#(escape(stand.map { "W4/W5 ran as " + $0 + "." } ?? ""))</text>"#)
    svg.append(#"<text x="\#(left)" y="\#(height - 20)" fill="#333">\#(escape(machine.summary))</text>"#)
    svg.append("</svg>")
    return svg.joined(separator: "\n") + "\n"
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

private func pow10(_ exponent: Int) -> Double {
    var value = 1.0
    for _ in 0..<abs(exponent) { value *= 10 }
    return exponent < 0 ? 1 / value : value
}

private func escape(_ text: String) -> String {
    text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
}
