import ConformanceKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
usage: conformance [--quick] [--scripts N] [--seed N] [--only TEXT] [--examples]
  --quick      300 scripts per pair instead of 5 000 (CI)
  --scripts N  scripts per pair
  --seed N     the seed of every pair's scripts (default 1)
  --only TEXT  only the pairs whose name contains TEXT
  --examples   print one script of each difference class, with both logs
"""

var scripts = 5_000
var seed: UInt64 = 1
var only: String?
var examples = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": scripts = 300
    case "--scripts": scripts = arguments.popFirst().flatMap { Int($0) } ?? scripts
    case "--seed": seed = arguments.popFirst().flatMap { UInt64($0) } ?? seed
    case "--only": only = arguments.popFirst()
    case "--examples": examples = true
    default:
        print(usage)
        exit(argument == "--help" ? 0 : 2)
    }
}

let chosen = pairs.filter { pair in only.map { pair.name.contains($0) } ?? true }
let outcomes = chosen.map { check($0, scripts: scripts, seed: seed) }
print("Stillwater against OpenCombine 0.14: \(scripts) scripts per pair, seed \(seed)\n")
print(report(outcomes))
for outcome in outcomes {
    for (kind, example) in outcome.examples.sorted(by: { $0.key.rawValue < $1.key.rawValue })
    where examples || kind == .unclassified {
        print("\n\(outcome.pair), \(kind.rawValue):\n\(example.description)")
    }
}
let failed = outcomes.filter { $0.unclassified > 0 }
if failed.isEmpty {
    print("\nNo unclassified difference.")
} else {
    print("\nUNCLASSIFIED DIFFERENCES in: \(failed.map(\.pair).joined(separator: ", "))")
    exit(1)
}
