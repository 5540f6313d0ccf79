import Foundation
import Testing

/// The benchmark figures of README.md and Benchmarks/README.md, checked against their one source: the table
/// of the latest full run, `Benchmarks/Results/latest.md`, which the benchmark writes itself. After a new run
/// these tests name every figure of the READMEs that no longer matches it.
@Suite("Benchmark figures in the READMEs")
struct BenchmarkFigureTests {
    @Test("the README's performance table is the latest run's")
    func performanceTable() throws {
        let run = try LatestRun(markdown: Repository.read("Benchmarks/Results/latest.md"))
        let readme = try Repository.read("README.md")
        var quoted: [String] = []
        for row in Figures.performanceRows(of: readme) {
            let cells = row.text.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let workload = String(cells[0].prefix { $0 != " " && $0 != ":" })
            quoted.append(workload)
            let sizes = workload == "W6" ? ["W6 10k", "W6 100k"] : [workload]
            let stillwater = sizes.compactMap(run.stillwater(in:))
            try #require(stillwater.count == sizes.count, "README.md:\(row.line): \(workload) is not in latest.md")
            let openCombine = sizes.compactMap(run.openCombine(in:))

            let faster = openCombine.isEmpty ? "–" : openCombine.map(\.vsStillwater).joined(separator: " / ")
            #expect(cells[1] == faster, "README.md:\(row.line): \(workload) vs OpenCombine")

            let ratio = stillwater.map(\.vsBaseline).joined(separator: " / ")
            #expect(cells[2] == ratio || cells[2].hasPrefix(ratio + " "),
                    "README.md:\(row.line): \(workload) ÷ baseline")

            let allocations = stillwater[0].allocations
            if allocations.isEmpty {
                #expect(cells[3] == "–", "README.md:\(row.line): \(workload) has no allocation count in latest.md")
            } else {
                let count = Double(cells[3].prefix { $0 != " " })
                #expect(count == Double(allocations), "README.md:\(row.line): \(workload) allocates \(allocations)")
            }
        }
        #expect(quoted == run.workloads, "the README's table should list latest.md's workloads, in order")
    }

    @Test("the README's text quotes the latest run", arguments: ["README.md", "Benchmarks/README.md"])
    func prose(file: String) throws {
        let run = try LatestRun(markdown: Repository.read("Benchmarks/Results/latest.md"))
        let text = try Repository.read(file)
        var covered: [Range<String.Index>] = Figures.performanceRows(of: text).map(\.range)
        for quote in Quote.all where quote.file == file {
            let matches = text.matches(of: try Regex(quote.pattern))
            #expect(matches.count == 1, "\(file) should say once: \(quote.pattern)")
            for match in matches {
                covered.append(match.range)
                let captures = (1..<match.output.count).map { match.output[$0].substring.map(String.init) ?? "" }
                if let problem = quote.check(captures, run) {
                    Issue.record("\(file):\(Figures.line(of: match.range.lowerBound, in: text)): \(problem)")
                }
            }
        }
        for figure in Figures.ratios(in: text) where !covered.contains(where: { $0.contains(figure.lowerBound) }) {
            Issue.record("""
                \(file):\(Figures.line(of: figure.lowerBound, in: text)) quotes \(text[figure]), which no check \
                compares with Benchmarks/Results/latest.md; add a Quote to BenchmarkFigureTests
                """)
        }
    }
}

/// A sentence that quotes the benchmarks: a pattern that finds it, and what its captured figures must be.
private struct Quote: Sendable {
    var file: String
    var pattern: String
    /// Returns what is wrong with the captured figures, or nil.
    var check: @Sendable ([String], LatestRun) -> String?

    static let all: [Quote] = [
        Quote(file: "README.md", pattern: #"libraries interleaved, (\d+) rounds, median"#) { figures, run in
            figures[0] == String(run.rounds) ? nil : "latest.md has \(run.rounds) rounds, not \(figures[0])"
        },
        Quote(file: "README.md", pattern: #"run of ([^;)]+);"#) { figures, run in
            figures[0] == run.summary ? nil : "latest.md's run is \"\(run.summary)\", not \"\(figures[0])\""
        },
        // The README's reasons to pick Stillwater, one figure each.
        Quote(file: "README.md", pattern: #"\((W1): ([0-9.]+x) faster than OpenCombine\)"#) { figures, run in
            Self.fasterThanOpenCombine(figures[1], in: figures[0], run)
        },
        Quote(file: "README.md", pattern: #"\((W7): ([0-9.]+x) faster than OpenCombine\)"#) { figures, run in
            Self.fasterThanOpenCombine(figures[1], in: figures[0], run)
        },
        Quote(file: "README.md", pattern: #"\((W9): ([0-9.]+x) faster than OpenCombine\)"#) { figures, run in
            Self.fasterThanOpenCombine(figures[1], in: figures[0], run)
        },
        Quote(file: "Benchmarks/README.md", pattern: Self.w1Range) { _, _ in nil },
        Quote(file: "Benchmarks/README.md", pattern: #"there\s+W1 is ([0-9.]+x), quiet"#) { figures, run in
            Self.ratio(figures[0], of: "W1", run)
        },
        // How to read a column, with a made-up figure: not a measurement.
        Quote(file: "Benchmarks/README.md", pattern: "OpenCombine `12x` means") { _, _ in nil },
        Quote(file: "Benchmarks/README.md", pattern: "Stillwater `2x` means") { _, _ in nil },
    ]

    /// W1's ratio to the closure chain across the earlier runs: on a quiet machine, then under load.
    static let w1Range =
        #"(?s)quiet machine\s+this\s+was ([0-9.]+)–([0-9.]+)x the closure chain;.*?rose to ([0-9.]+)–([0-9.]+)x"#

    /// Checks a quoted ratio to the baseline against the latest run's.
    static func ratio(_ figure: String, of workload: String, _ run: LatestRun) -> String? {
        let measured = run.stillwater(in: workload)?.vsBaseline ?? "none"
        return figure == measured ? nil : "latest.md measured \(workload) at \(measured), not \(figure)"
    }

    /// Checks a quoted "÷ Stillwater" figure of OpenCombine against the latest run's.
    static func fasterThanOpenCombine(_ figure: String, in workload: String, _ run: LatestRun) -> String? {
        let measured = run.openCombine(in: workload)?.vsStillwater ?? "none"
        return figure == measured ? nil : "latest.md measured OpenCombine's \(workload) at \(measured), not \(figure)"
    }

}

/// The latest full run, read from `Benchmarks/Results/latest.md`.
private struct LatestRun: Sendable {
    struct Row: Sendable {
        var workload: String
        var library: String
        /// "÷ Stillwater", such as "35.8x".
        var vsStillwater: String
        /// "÷ baseline", such as "2.73x".
        var vsBaseline: String
        /// "allocs/op", empty when not counted.
        var allocations: String
    }

    var rows: [Row] = []
    /// From the targets table, by short name: the wanted ratio to the baseline ("W1": "3.00" for "≤ 3.00x").
    var targets: [String: String] = [:]
    var rounds = 0
    /// The date and machine, such as "2026-11-22 00:03 UTC, x86_64, AMD EPYC, 2 cores".
    var summary = ""

    init(markdown: String) throws {
        for line in markdown.split(separator: "\n") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count == 11, cells[0].hasPrefix("W") {
                rows.append(Row(workload: cells[0], library: cells[1], vsStillwater: cells[6],
                                vsBaseline: cells[7], allocations: cells[8]))
            } else if cells.count == 5, cells[0].hasPrefix("W") {
                // "≤ 3.00x" and "2.73x ✓" become "3.00" and "2.73x".
                targets[cells[0]] = String(cells[4].drop { !$0.isNumber }.dropLast())
            } else if let footer = try #/^(\d+) rounds, libraries interleaved, median; (.*)\.$/#.wholeMatch(in: line) {
                rounds = Int(footer.1) ?? 0
                summary = String(footer.2)
            }
        }
        try #require(!rows.isEmpty && !targets.isEmpty && rounds > 0, "latest.md lacks its table, targets or footer")
        targets = Dictionary(uniqueKeysWithValues: targets.map { (Self.key($0.key), $0.value) })
    }

    /// A workload's short name: "W1", "W5b", and for the two sizes of W6 "W6 10k" and "W6 100k".
    static func key(_ workload: String) -> String {
        let words = workload.split(separator: " ")
        return words[0] == "W6" ? words.prefix(2).joined(separator: " ") : String(words[0])
    }

    /// The short names of the workloads, in the table's order, with W6 once.
    var workloads: [String] {
        rows.map { String($0.workload.prefix { $0 != " " }) }.reduce(into: []) { names, name in
            if names.last != name { names.append(name) }
        }
    }

    func stillwater(in workload: String) -> Row? {
        rows.first { Self.key($0.workload) == workload && $0.library.hasPrefix("Stillwater") }
    }

    func openCombine(in workload: String) -> Row? {
        rows.first { Self.key($0.workload) == workload && $0.library.hasPrefix("OpenCombine") }
    }
}

/// Finding figures in markdown.
private enum Figures {
    /// The rows of the README's performance table (the lines that start with "| W").
    static func performanceRows(of text: String) -> [(text: Substring, line: Int, range: Range<String.Index>)] {
        text.matches(of: #/(?m)^\| W.*$/#).map { ($0.output, line(of: $0.range.lowerBound, in: text), $0.range) }
    }

    /// Every ratio such as "2.73x" or "2.6–2.9x" outside code blocks.
    static func ratios(in text: String) -> [Range<String.Index>] {
        let code = text.matches(of: #/(?ms)^```.*?^```/#).map(\.range)
        return text.matches(of: #/\b\d+(\.\d+)?(–\d+(\.\d+)?)?x\b/#).map(\.range)
            .filter { figure in !code.contains { $0.contains(figure.lowerBound) } }
    }

    /// The 1-based line number of a position.
    static func line(of index: String.Index, in text: String) -> Int {
        text[..<index].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }
}

/// Files of this repository, found from this source file's path.
private enum Repository {
    static func read(_ path: String) throws -> String {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(contentsOf: root.appending(path: path), encoding: .utf8)
    }
}
