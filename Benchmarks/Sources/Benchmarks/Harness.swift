import Callgrind
import MallocCounter

// MARK: - What a benchmark is

/// Who runs a contender: the library under test, its peer, or a hand-written baseline.
enum Kind: Int, CaseIterable {
    case stillwater, openCombine, baseline, limit

    /// The label used when a contender does not pick its own.
    var defaultName: String {
        switch self {
        case .stillwater: "Stillwater"
        case .openCombine: "OpenCombine"
        case .baseline: "hand-written"
        case .limit: "limit (fused loop)"
        }
    }
}

/// One library's implementation of a workload.
///
/// `run` builds everything the workload needs, times only the hot part through the ``Stopwatch`` it is
/// handed, and returns the workload's checksum.
struct Contender {
    var kind: Kind
    var name: String
    var run: (inout Stopwatch) -> Int

    init(_ kind: Kind, name: String? = nil, run: @escaping (inout Stopwatch) -> Int) {
        self.kind = kind
        self.name = name ?? kind.defaultName
        self.run = run
    }
}

/// The unit a workload's times are reported in.
enum TimeUnit {
    case nanoseconds, milliseconds
    var label: String { self == .nanoseconds ? "ns" : "ms" }
    var nanoseconds: Double { self == .nanoseconds ? 1 : 1e6 }
}

struct Workload {
    /// A short name for `--only` and the table, such as "W1" or "W6 100k".
    var name: String
    /// What it does, for the table: "chain", "fan-out", ...
    var title: String
    /// What one operation is, for the unit column: "value", "delivery", ...
    var operation: String
    /// How many operations one run times; the reported figure is the run's time divided by this.
    var operations: Int
    var unit: TimeUnit = .nanoseconds
    /// Whether an extra, untimed pass counts the allocations of each contender's hot part.
    var countsAllocations = false
    var contenders: [Contender]

    /// The baseline that Stillwater is compared with: the first contender of kind `.baseline`.
    var reference: Contender? { contenders.first { $0.kind == .baseline } }
}

/// How big and how long a run is, from the command line.
struct Scale {
    /// Divides every loop count of every workload (`--quick` uses 50). Shapes (subscriber counts) stay.
    var divisor = 1
    var rounds = 5

    func count(_ full: Int) -> Int { max(1, full / divisor) }
}

// MARK: - Measuring

/// Times the hot part of a run and, when counting is switched on, counts its allocations.
///
/// Setup and teardown of a run (creating subscribers, releasing them) stay outside `measure`, so a
/// figure is only the work the workload names.
struct Stopwatch {
    private(set) var elapsed: Duration = .zero
    private(set) var allocations = 0
    /// Something the run wants shown beside its figures (W6: the changeset's size and validity).
    var note: String?
    /// How many delivered values the run's glitch check found computed from a mix of two states (W7).
    var glitches: Int?

    @inline(__always)
    mutating func measure<R>(_ body: () throws -> R) rethrows -> R {
        let allocationsBefore = mallocCount()
        let start = ContinuousClock.now
        callgrindToggleCollect()  // the speed gate counts only the body (Scripts/speed-gate.py)
        defer { callgrindToggleCollect() }
        let result = try body()
        elapsed += ContinuousClock.now - start
        allocations += mallocCount() - allocationsBefore
        return result
    }
}

/// Returns its argument through a call the optimiser cannot see into, so it cannot constant-fold a
/// loop count or inline a stage of a hand-written baseline that a library calls through a stored closure.
@inline(never) @_optimize(none)
func opaque(_ value: Int) -> Int { value }

/// The same for one stage of a closure chain. Deliberately not generic: a closure passed through a
/// generic `T` comes back wrapped in two reabstraction thunks, which would double the cost of each call
/// and make the baseline look slower than hand-written code is.
@inline(never) @_optimize(none)
func opaque(_ stage: @escaping (Int) -> Void) -> (Int) -> Void { stage }

/// A mutable integer shared by reference, for subscribers to count or sum into.
final class Box {
    var value = 0
}

/// The last value a hand-written deduplicating observer saw. A class, as a library's node would be:
/// a `var` captured by the closure instead would pay a dynamic exclusivity check on every access.
final class Latest<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}

// MARK: - Running

/// The outcome of one contender on one workload.
struct Result {
    var workload: Workload
    var contender: Contender
    /// Nanoseconds per operation, one entry per round.
    var samples: [Double] = []
    var checksums: [Int] = []
    var allocationsPerOperation: Double?
    /// The last note a run left on its stopwatch, or empty.
    var note = ""
    /// The most glitches one round counted, for workloads that check for them.
    var glitches: Int?

    var median: Double? { samples.isEmpty ? nil : samples.sorted()[samples.count / 2] }
    var min: Double? { samples.min() }
    var max: Double? { samples.max() }
    var checksum: Int? { checksums.first }
}

/// Runs every workload: for each round, each contender once, in turn (A B C A B C ...), so slow drifts
/// of the machine (other load, frequency changes) touch every library alike. Allocation counts come from
/// one more run per contender after the timed rounds, with counting on.
func runAll(_ workloads: [Workload], scale: Scale, progress: (String) -> Void) -> [Result] {
    let countAllocations = allocationCountingWorks()
    var all: [Result] = []
    for workload in workloads {
        var results = workload.contenders.map { Result(workload: workload, contender: $0) }
        for round in 1...scale.rounds {
            progress("\(workload.name) round \(round)/\(scale.rounds)")
            for index in results.indices {
                var stopwatch = Stopwatch()
                let checksum = results[index].contender.run(&stopwatch)
                let nanoseconds = Double(stopwatch.elapsed.components.seconds) * 1e9
                    + Double(stopwatch.elapsed.components.attoseconds) / 1e9
                results[index].samples.append(nanoseconds / Double(workload.operations))
                results[index].checksums.append(checksum)
                if let note = stopwatch.note { results[index].note = note }
                if let glitches = stopwatch.glitches {
                    results[index].glitches = Swift.max(results[index].glitches ?? 0, glitches)
                }
            }
        }
        if workload.countsAllocations && countAllocations {
            for index in results.indices {
                var stopwatch = Stopwatch()
                mallocCounterSetEnabled(true)
                _ = results[index].contender.run(&stopwatch)
                mallocCounterSetEnabled(false)
                results[index].allocationsPerOperation = Double(stopwatch.allocations) / Double(workload.operations)
            }
        }
        all += results
    }
    return all
}

/// Whether the malloc counter sees allocations: it must count the buffer of a fresh array.
func allocationCountingWorks() -> Bool {
    guard mallocCounterIsAvailable() else { return false }
    var stopwatch = Stopwatch()
    mallocCounterSetEnabled(true)
    let array = stopwatch.measure { [Int](repeating: 7, count: opaque(64)) }
    mallocCounterSetEnabled(false)
    return withExtendedLifetime(array) { stopwatch.allocations >= 1 }
}

/// Every checksum problem in `results`: a contender whose rounds disagree, or one that disagrees with
/// the workload's first contender that ran (a baseline, whose checksum is the expected value).
func checksumFailures(_ results: [Result]) -> [String] {
    var failures: [String] = []
    var expected: [String: (name: String, value: Int)] = [:]
    for result in results.sorted(by: { $0.contender.kind.rawValue > $1.contender.kind.rawValue }) {
        guard let value = result.checksum else { continue }
        let workload = result.workload.name
        if Set(result.checksums).count > 1 {
            failures.append("\(workload) \(result.contender.name): checksums differ between rounds: \(result.checksums)")
        }
        if let reference = expected[workload] {
            if reference.value != value {
                failures.append("\(workload) \(result.contender.name): checksum \(value), but \(reference.name) gives \(reference.value)")
            }
        } else {
            expected[workload] = (result.contender.name, value)
        }
    }
    return failures
}

/// Every contender that glitched: all must be glitch-free but the peer, whose glitches are only reported.
func glitchFailures(_ results: [Result]) -> [String] {
    results.compactMap { result in
        guard let glitches = result.glitches, glitches > 0, result.contender.kind != .openCombine else { return nil }
        return "\(result.workload.name) \(result.contender.name): \(glitches) values computed from a mix of two states"
    }
}
