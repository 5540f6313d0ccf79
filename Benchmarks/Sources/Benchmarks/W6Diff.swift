/// W6's element: identity is `id`, content is `value`.
struct Item: Equatable {
    let id: Int
    var value: Int
}

/// A changeset in plain arrays, whichever library made it. Index rules as in DESIGN.md: deletes and
/// updates in old indexes, inserts in new indexes, moves from old to new; each ascending except moves.
struct Patch {
    var deletes: [Int]
    var inserts: [Int]
    var moves: [(from: Int, to: Int)]
    var updates: [Int]
}

/// W6 diff: one diff of `count` items per run (input built once, outside the timing). Checksum: the
/// number of elements kept (in both lists); a changeset that does not turn old into new gives -1.
func diffWorkload(_ scale: Scale, count fullCount: Int, label: String) -> Workload {
    let input = DiffInput(count: scale.count(fullCount), seed: 0x5EED_0000 &+ UInt64(fullCount))

    return Workload(
        name: "W6 \(label)", title: "diff", operation: "diff", operations: 1, unit: .milliseconds,
        contenders: [
            Contender(.stillwater) { stopwatch in
                let patch = StillwaterDiff.changeset(from: input.old, to: input.new, stopwatch: &stopwatch)
                return input.check(patch, stopwatch: &stopwatch)
            },
            Contender(.baseline, name: "two dictionaries") { stopwatch in
                let (oldIndex, newIndex) = stopwatch.measure {
                    (indexByID(input.old), indexByID(input.new))
                }
                return oldIndex.keys.reduce(0) { newIndex[$1] == nil ? $0 : $0 + 1 }
            },
        ]
    )
}

/// The work any O(n) diff must do at least: hash every identifier of both lists.
private func indexByID(_ items: [Item]) -> [Int: Int] {
    var index: [Int: Int] = [:]
    index.reserveCapacity(items.count)
    for (offset, item) in items.enumerated() { index[item.id] = offset }
    return index
}

/// W6's input, from a fixed seed: `old` is ids 0..<n shuffled, all values 0; `new` is `old` with 10%
/// deleted, 10% new ids inserted at random places, 5% moved to random places and 10% with value += 1
/// (the deleted, moved and updated elements are disjoint).
struct DiffInput {
    let old: [Item]
    let new: [Item]
    /// The fewest moves any valid changeset needs: the kept elements outside a longest run that kept
    /// its relative order.
    let minimalMoves: Int

    init(count: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let old = random.shuffled(Array(0..<count)).map { Item(id: $0, value: 0) }
        let tenth = count / 10
        let picked = random.shuffled(Array(0..<count))  // old positions, in random order
        let deleted = Set(picked[0..<tenth])
        let updated = Set(picked[tenth..<2 * tenth])
        let moved = Set(picked[2 * tenth..<2 * tenth + count / 20])

        // Each element of `new` gets a sort key: a kept element its old position times two, a moved or
        // inserted one a random odd key (a random gap). Ties break by the order of creation.
        var keyed: [(key: Int, item: Item)] = []
        for (position, item) in old.enumerated() where !deleted.contains(position) {
            let key = moved.contains(position) ? 2 * random.below(count) + 1 : 2 * position
            keyed.append((key, Item(id: item.id, value: updated.contains(position) ? 1 : 0)))
        }
        for id in count..<count + tenth {
            keyed.append((2 * random.below(count) + 1, Item(id: id, value: 0)))
        }
        let order = keyed.indices.sorted { (keyed[$0].key, $0) < (keyed[$1].key, $1) }

        self.old = old
        self.new = order.map { keyed[$0].item }
        self.minimalMoves = DiffInput.minimalMoves(from: old, to: self.new)
    }

    private static func minimalMoves(from old: [Item], to new: [Item]) -> Int {
        var oldPosition: [Int: Int] = [:]
        for (position, item) in old.enumerated() { oldPosition[item.id] = position }
        let kept = new.compactMap { oldPosition[$0.id] }
        // Longest increasing subsequence, patience sorting: tails[k] = smallest tail of a run of k+1.
        var tails: [Int] = []
        for position in kept {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if tails[middle] < position { low = middle + 1 } else { high = middle }
            }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        return kept.count - tails.count
    }

    /// Validates `patch` (applying it to `old` must give `new`) and notes its size on the stopwatch.
    /// Returns W6's checksum, or -1 when the patch is invalid.
    func check(_ patch: Patch, stopwatch: inout Stopwatch) -> Int {
        if let problem = problem(in: patch) {
            stopwatch.note = "INVALID: \(problem)"
            return -1
        }
        let minimal = patch.moves.count == minimalMoves ? "minimal" : "minimal is \(minimalMoves)"
        stopwatch.note = "valid; \(patch.deletes.count) del, \(patch.inserts.count) ins, "
            + "\(patch.moves.count) moves (\(minimal)), \(patch.updates.count) upd"
        return old.count - patch.deletes.count
    }

    /// Applies `patch` to `old` and compares with `new`: what is wrong, or `nil` when it reproduces `new`.
    ///
    /// Kept elements (neither deleted nor moved) fill the slots of `new` that are neither inserts nor
    /// move targets, in order. Each must keep its identity, and its content too unless it is an update.
    /// A move target must hold the moved element's identity (its content is read from `new`).
    func problem(in patch: Patch) -> String? {
        func isStrictlyAscending(_ indexes: [Int], below limit: Int) -> Bool {
            zip(indexes, indexes.dropFirst()).allSatisfy { $0 < $1 } && indexes.allSatisfy { (0..<limit).contains($0) }
        }
        guard isStrictlyAscending(patch.deletes, below: old.count) else { return "deletes not ascending old indexes" }
        guard isStrictlyAscending(patch.inserts, below: new.count) else { return "inserts not ascending new indexes" }
        guard isStrictlyAscending(patch.updates, below: old.count) else { return "updates not ascending old indexes" }

        enum Fate { case kept, deleted, moved }
        var oldFate = [Fate](repeating: .kept, count: old.count)
        var newSlot = [Int?](repeating: nil, count: new.count)         // old index that fills a slot
        var isTarget = [Bool](repeating: false, count: new.count)
        for index in patch.deletes { oldFate[index] = .deleted }
        for index in patch.inserts { isTarget[index] = true }
        for move in patch.moves {
            guard old.indices.contains(move.from), new.indices.contains(move.to) else { return "move out of range" }
            guard oldFate[move.from] == .kept, !isTarget[move.to] else { return "move \(move) overlaps another change" }
            oldFate[move.from] = .moved
            isTarget[move.to] = true
            newSlot[move.to] = move.from
        }
        let updates = Set(patch.updates)
        guard patch.updates.allSatisfy({ oldFate[$0] == .kept }) else { return "an update of a deleted or moved element" }

        var kept = old.indices.filter { oldFate[$0] == .kept }.makeIterator()
        for slot in new.indices where !isTarget[slot] { newSlot[slot] = kept.next() ?? -1 }
        guard kept.next() == nil else { return "more kept elements than free slots" }

        for slot in new.indices {
            guard let source = newSlot[slot] else { continue }  // an insert: its content is new's own
            guard source >= 0 else { return "fewer kept elements than free slots" }
            guard old[source].id == new[slot].id else { return "slot \(slot) holds id \(old[source].id), new has \(new[slot].id)" }
            if oldFate[source] == .kept, !updates.contains(source), old[source] != new[slot] {
                return "element at old \(source) changed but is not reported as updated"
            }
        }
        return nil
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed generator, so W6's input is the same
/// on every machine and every run.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound (modulo bias is negligible for these bounds).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// Fisher–Yates, written out so the order never depends on the standard library's algorithm.
    mutating func shuffled<T>(_ array: [T]) -> [T] {
        var array = array
        for index in array.indices.reversed() where index > 0 {
            array.swapAt(index, below(index + 1))
        }
        return array
    }
}
