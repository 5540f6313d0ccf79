import StillwaterTesting

/// How the logs of one script compare.
public enum Classification: String, CaseIterable, Sendable {
    /// Both subscribers saw the same events, entered and left in the same order.
    case same
    /// A reentrant send that OpenCombine delivered nested inside the current delivery and Stillwater
    /// queued after it (Contracts.md, "Reentrancy"): the same events in the same order, entered and left
    /// otherwise. Stillwater's log is exactly OpenCombine's when the send is queued on OpenCombine.
    case reentrancyQueued = "reentrancy: queued, not nested"
    /// The same, where queueing changes what arrives, not only how: the nested send overtook events
    /// (a `flatMapLatest` inner stream replaced before its second value). Stillwater's log is exactly
    /// OpenCombine's when the send is queued on OpenCombine.
    case reentrancyChangesEvents = "reentrancy: queued, other events"
    /// A documented difference of OpenCombine's operator (``KnownDifference``).
    case knownDifference = "known OpenCombine difference"
    /// Anything else: a difference no documented choice of Stillwater explains. Fails the run.
    case unclassified
}

/// One script and what each library's subscriber saw.
public struct Example: Sendable {
    public let script: Script
    public let stillwater: Log
    public let openCombine: Log
    /// The log of the known difference's peer chain, for a pair that has one.
    public var peer: Log? = nil

    /// The script and both logs (and the peer chain's), on three or four lines.
    public var description: String {
        """
          script:      \(script)
          Stillwater:  \(stillwater.joined(separator: " "))
          OpenCombine: \(openCombine.joined(separator: " "))
        """ + (peer.map { "\n  peer chain:  " + $0.joined(separator: " ") } ?? "")
    }
}

/// What one pair gave over all its scripts.
public struct Outcome: Sendable {
    public let pair: String
    public var counts: [Classification: Int] = [:]
    /// The first script of each class other than ``Classification/same``.
    public var examples: [Classification: Example] = [:]

    public var unclassified: Int { counts[.unclassified, default: 0] }
}

/// Compares the logs of one script: Stillwater's, OpenCombine's, and OpenCombine's with its reentrant
/// sends queued (`queued`, the same as `openCombine` for a script without one).
public func classify(
    stillwater: Log, openCombine: Log, queued: Log, script: Script, known: KnownDifference? = nil,
    peer: Log? = nil, queuedAtReturn: Log? = nil
) -> Classification {
    // Stillwater promises one event at a time per observer: a nested entry is never explained.
    guard isSerialized(stillwater) else { return .unclassified }
    if stillwater == openCombine { return .same }
    if script.reentry != nil && (stillwater == queued || stillwater == queuedAtReturn) {
        let entries = { (log: Log) in log.filter { !$0.hasPrefix("/") } }
        return entries(stillwater) == entries(openCombine) ? .reentrancyQueued : .reentrancyChangesEvents
    }
    // A known difference with a peer chain compares with that chain's log (`peer`, its reentrant sends
    // queued); one without compares with OpenCombine's queued log, rewritten.
    if let known, stillwater == known.expected(peer ?? queued) { return .knownDifference }
    return .unclassified
}

/// Whether every value's entry is left before the next event arrives.
func isSerialized(_ log: Log) -> Bool {
    var inside: String?
    for entry in log {
        if let value = inside {
            guard entry == "/" + value else { return false }
            inside = nil
        } else if entry.hasPrefix("/") {
            return false
        } else if entry != "done" && !entry.hasPrefix("error(") {
            inside = entry
        }
    }
    return inside == nil
}

/// Runs `scripts` seeded scripts through `pair` in both libraries. The scripts depend only on `seed`
/// and the pair's inputs, so one pair can be checked again alone.
public func check(_ pair: Pair, scripts: Int, seed: UInt64) -> Outcome {
    var random = SeededRandom(seed: seed)
    var outcome = Outcome(pair: pair.name)
    for _ in 0..<scripts {
        let script = Script.random(inputs: pair.inputs, reentrant: pair.reentrant, using: &random)
        var example = Example(
            script: script,
            stillwater: runStillwater(script, pair.stillwater),
            openCombine: runOpenCombine(script, pair.openCombine))
        let queued = script.reentry == nil
            ? example.openCombine : runOpenCombine(script, pair.openCombine, queueReentry: true)
        let peer = pair.known?.peer.map { runOpenCombine(script, $0, queueReentry: true) }
        example.peer = peer
        // The sends queued only until the subscriber's observer returns: asked for only when needed.
        let queuedAtReturn = script.reentry == nil || example.stillwater == queued
            ? nil : runOpenCombine(script, pair.openCombine, queue: .afterObserver)
        let kind = classify(stillwater: example.stillwater, openCombine: example.openCombine, queued: queued,
                            script: script, known: pair.known, peer: peer, queuedAtReturn: queuedAtReturn)
        outcome.counts[kind, default: 0] += 1
        if kind != .same, outcome.examples[kind] == nil { outcome.examples[kind] = example }
    }
    return outcome
}

/// The markdown table of the outcomes: scripts per pair and per classification.
public func report(_ outcomes: [Outcome]) -> String {
    let kinds = Classification.allCases
    var lines = ["| pair | scripts | " + kinds.map(\.rawValue).joined(separator: " | ") + " |",
                 "|---|---:|" + kinds.map { _ in "---:" }.joined(separator: "|") + "|"]
    for outcome in outcomes {
        let total = outcome.counts.values.reduce(0, +)
        lines.append("| \(outcome.pair) | \(total) | "
            + kinds.map { "\(outcome.counts[$0, default: 0])" }.joined(separator: " | ") + " |")
    }
    return lines.joined(separator: "\n")
}
