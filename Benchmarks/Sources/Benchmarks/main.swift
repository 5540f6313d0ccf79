import MallocCounter

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every workload, in report order. Each is built only when selected (W6 builds its input up front).
let registry: [(name: String, make: (Scale) -> Workload)] = [
    ("W1", chainWorkload),
    ("W2", fanoutWorkload),
    ("W3", churnWorkload),
    ("W4", scopedWorkload),
    ("W5", storeWorkload),
    ("W5b", dedupStoreWorkload),
    ("W6 10k", { diffWorkload($0, count: 10_000, label: "10k") }),
    ("W6 100k", { diffWorkload($0, count: 100_000, label: "100k") }),
]

let usage = """
    usage: benchmarks [--quick] [--only W1,W3] [--rounds N] [--markdown PATH] [--svg PATH]

      --quick          1/50 of every loop count and 3 rounds: a smoke run for CI
      --only LIST      comma-separated workloads: W1 W2 W3 W4 W5 W5b W6 ("W6" means both sizes)
      --rounds N       rounds per library (default 5; --quick: 3)
      --markdown PATH  also write the table to PATH
      --svg PATH       also write a bar chart (log scale) to PATH
    """

// MARK: Options

var scale = Scale()
var rounds: Int?
var selectors: [String]?
var markdownPath: String?
var svgPath: String?

var arguments = CommandLine.arguments.dropFirst().makeIterator()
func value(of option: String) -> String {
    guard let value = arguments.next() else {
        printError("\(option) needs a value\n\(usage)")
        exit(2)
    }
    return value
}
while let argument = arguments.next() {
    switch argument {
    case "--quick": scale = Scale(divisor: 50, rounds: 3)
    case "--only": selectors = value(of: argument).split(separator: ",").map { String($0).trimmingPrefix(" ").description }
    case "--rounds":
        guard let count = Int(value(of: argument)), count > 0 else { printError("--rounds needs a positive number"); exit(2) }
        rounds = count
    case "--markdown": markdownPath = value(of: argument)
    case "--svg": svgPath = value(of: argument)
    case "--help", "-h": print(usage); exit(0)
    default: printError("unknown option \(argument)\n\(usage)"); exit(2)
    }
}
if let rounds { scale.rounds = rounds }

let selected = registry.filter { entry in selectors?.contains { workload(entry.name, isNamed: $0) } ?? true }
if let selectors, let unknown = selectors.first(where: { name in !registry.contains { workload($0.name, isNamed: name) } }) {
    printError("no workload named \(unknown)\n\(usage)")
    exit(2)
}

// MARK: Run and report

#if DEBUG
printError("warning: a debug build; measure with `swift run -c release benchmarks`")
#endif
if !mallocCounterIsAvailable() { printError("note: allocation counts need Linux with glibc; allocs/op stays empty") }

let machine = Machine.current()
let results = runAll(selected.map { $0.make(scale) }, scale: scale) { printError($0) }
let table = markdownReport(results, scale: scale, machine: machine)
print(table)
if let markdownPath { writeFile(markdownPath, table) }
if let svgPath { writeFile(svgPath, svgChart(results, scale: scale, machine: machine)) }

let failures = checksumFailures(results)
if !failures.isEmpty {
    printError("CHECKSUM MISMATCH: a library did different work from the others")
    for failure in failures { printError("  \(failure)") }
    exit(1)
}
