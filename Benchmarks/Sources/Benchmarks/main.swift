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
    ("W7", derivedWorkload),
    ("W8", latestWorkload),
    ("W9", effectsWorkload),
    ("W12", bridgeWorkload),
    ("W14", liveFanoutWorkload),
    ("W14 a10", { liveFanoutWorkload($0, audiences: 10) }),
    ("W14 a1000", { liveFanoutWorkload($0, audiences: 1_000) }),
    ("W14 push", livePushFanoutWorkload),
]

/// Whether `selector` (from `--only`) selects the entry named `name`: an entry named exactly so alone
/// ("W14" is not "W14 a10"), else every entry whose name starts with it and a space ("W6": both sizes).
@MainActor
func selects(_ selector: String, _ name: String) -> Bool {
    registry.contains { $0.name.lowercased() == selector.lowercased() }
        ? name.lowercased() == selector.lowercased() : workload(name, isNamed: selector)
}

let usage = """
    usage: benchmarks [--quick] [--only W1,W3] [--library NAME] [--rounds N] [--markdown PATH] [--svg PATH]
                      [--operations]
           benchmarks --journal-group-commit [--commands N]
           benchmarks --only W15 [--rooms N] [--idle-seconds S] [--big-rooms N]

      --quick          1/50 of every loop count and 3 rounds: a smoke run for CI
      --only LIST      comma-separated workloads: W1 W2 W3 W4 W5 W5b W6 W7 W8 W9 W12 W14
                       "W14 a10" "W14 a1000" "W14 push" ("W6" means both sizes; "W14" is W14 alone);
                       W15 alone runs the many-rooms measurement instead (see below)
      --library NAME   run only the libraries whose name starts with NAME (for profiling one library)
      --rounds N       rounds per library (default 5; --quick: 3)
      --markdown PATH  also write the table to PATH
      --svg PATH       also write a bar chart (log scale) to PATH
      --operations     print each selected workload's name, operations per run at this scale and what one
                       operation is, tab-separated, one per line, and stop (for Scripts/speed-gate.py)
      --journal-group-commit
                       instead of the workloads: count the commands per flush of a FileJournal in
                       $TMPDIR (default /tmp) with 1, 10 and 100 concurrent appenders, print the table, stop
      --commands N     commands per row of --journal-group-commit (default 2000)
      --only W15       W15 many rooms, alone: the first join of 100 cold rooms among --rooms N (default
                       10000, each a FileJournal of 1000 records, generated once into $TMPDIR/stillwater-w15),
                       the process's CPU, context switches and RSS over --idle-seconds S (default 60) with
                       those rooms open and a client in each, then the first join of --big-rooms N
                       (default 20) rooms of 100000 records
    """

// MARK: Options

struct Options {
    var scale = Scale()
    var selectors: [String]?
    var library: String?
    var markdownPath: String?
    var svgPath: String?
    var printsOperations = false
    var journalGroupCommit = false
    var groupCommitCommands = 2_000
    var manyRooms: ManyRoomsOptions?

    /// Parses the command line, or stops with the usage text.
    @MainActor
    init(_ arguments: [String]) {
        var rounds: Int?
        var arguments = arguments.makeIterator()
        func value(of option: String) -> String {
            guard let value = arguments.next() else { fail("\(option) needs a value") }
            return value
        }
        while let argument = arguments.next() {
            switch argument {
            case "--quick": scale = Scale(divisor: 50, rounds: 3)
            case "--only": selectors = value(of: argument).split(separator: ",").map { String($0) }
            case "--library": library = value(of: argument).lowercased()
            case "--rounds":
                guard let count = Int(value(of: argument)), count > 0 else { fail("--rounds needs a positive number") }
                rounds = count
            case "--markdown": markdownPath = value(of: argument)
            case "--svg": svgPath = value(of: argument)
            case "--operations": printsOperations = true
            case "--journal-group-commit": journalGroupCommit = true
            case "--commands":
                guard let count = Int(value(of: argument)), count >= 100 else { fail("--commands needs a number of at least 100") }
                groupCommitCommands = count
            case "--rooms", "--idle-seconds", "--big-rooms":
                guard let count = Int(value(of: argument)), count > 0 else { fail("\(argument) needs a positive number") }
                var rooms = manyRooms ?? ManyRoomsOptions()
                switch argument {
                case "--rooms": rooms.rooms = count
                case "--idle-seconds": rooms.idleSeconds = count
                default: rooms.bigRooms = count
                }
                manyRooms = rooms
            case "--help", "-h": print(usage); exit(0)
            default: fail("unknown option \(argument)")
            }
        }
        if let rounds { scale.rounds = rounds }
        if let selectors, selectors.contains(where: { $0.lowercased() == "w15" }) {
            guard selectors.count == 1 else { fail("W15 runs alone: --only W15") }
            manyRooms = manyRooms ?? ManyRoomsOptions()
            guard manyRooms!.rooms >= manyRooms!.open else { fail("--rooms needs at least \(manyRooms!.open)") }
            return
        }
        if manyRooms != nil { fail("--rooms, --idle-seconds and --big-rooms go with --only W15") }
        if let unknown = selectors?.first(where: { name in !registry.contains { workload($0.name, isNamed: name) } }) {
            fail("no workload named \(unknown)")
        }
    }

    private func fail(_ message: String) -> Never {
        printError("\(message)\n\(usage)")
        exit(2)
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let selected = registry.filter { entry in options.selectors?.contains { selects($0, entry.name) } ?? true }

// MARK: Run and report

#if DEBUG
printError("warning: a debug build; measure with `swift run -c release benchmarks`")
#endif
if !allocationCountingWorks() { printError("note: allocations are not counted here (Linux with glibc only); allocs/op stays empty") }

if let manyRooms = options.manyRooms {
    try await runManyRooms(manyRooms)
    exit(0)
}

if options.journalGroupCommit {
    try await runGroupCommitMeasurement(total: options.groupCommitCommands)
    exit(0)
}

let machine = Machine.current()
var workloads = selected.map { $0.make(options.scale) }
if options.printsOperations {
    for workload in workloads { print("\(workload.name)\t\(workload.operations)\t\(workload.operation)") }
    exit(0)
}
if let library = options.library {
    for index in workloads.indices {
        workloads[index].contenders.removeAll { !$0.name.lowercased().hasPrefix(library) }
    }
}
let results = runAll(workloads, scale: options.scale) { printError($0) }
let table = markdownReport(results, scale: options.scale, machine: machine)
print(table)
if let markdownPath = options.markdownPath { writeFile(markdownPath, table) }
if let svgPath = options.svgPath { writeFile(svgPath, svgChart(results, scale: options.scale, machine: machine)) }

let failures = checksumFailures(results)
if !failures.isEmpty {
    printError("CHECKSUM MISMATCH: a library did different work from the others")
    for failure in failures { printError("  \(failure)") }
}
let glitches = glitchFailures(results)
if !glitches.isEmpty {
    printError("GLITCH: a library delivered a value no single state gives")
    for glitch in glitches { printError("  \(glitch)") }
}
if !failures.isEmpty || !glitches.isEmpty { exit(1) }
