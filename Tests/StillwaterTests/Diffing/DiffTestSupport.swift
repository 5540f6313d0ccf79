import StillwaterTesting
import Testing
@testable import Stillwater

/// A list element for the diff tests: identity is `id`, content is `value`.
struct DiffItem: Diffable, Hashable, CustomStringConvertible {
    var id: Int
    var value = 0
    var diffIdentifier: Int { id }
    var description: String { value == 0 ? "\(id)" : "\(id)'\(value)" }
}

/// Two versions of a list: `old` holds `count` distinct ids in random order; `new` deletes 10% of them,
/// inserts 10% new ids at random places, moves 5% to random places and changes the value of 10% (the
/// deleted, moved and changed elements are disjoint).
func editedLists(count: Int, seed: UInt64) -> (old: [DiffItem], new: [DiffItem]) {
    var random = SeededRandom(seed: seed)
    let old = (0..<count).shuffled(using: &random).map { DiffItem(id: $0) }
    let picked = Array(old.indices.shuffled(using: &random))
    let tenth = count / 10
    let deleted = Set(picked.prefix(tenth))
    let updated = Set(picked.dropFirst(tenth).prefix(tenth))
    let moved = Set(picked.dropFirst(2 * tenth).prefix(count / 20))
    // Kept elements sort by twice their old position; moved and inserted ones get a random odd key (a
    // random gap between kept ones). Ties keep the order of creation.
    var keyed: [(key: Int, item: DiffItem)] = []
    for (index, item) in old.enumerated() where !deleted.contains(index) {
        let item = DiffItem(id: item.id, value: updated.contains(index) ? 1 : 0)
        keyed.append((moved.contains(index) ? 2 * Int.random(in: 0...count, using: &random) + 1 : 2 * index, item))
    }
    for id in count..<count + tenth {
        keyed.append((2 * Int.random(in: 0...count, using: &random) + 1, DiffItem(id: id)))
    }
    let new = keyed.indices.sorted { (keyed[$0].key, $0) < (keyed[$1].key, $1) }.map { keyed[$0].item }
    return (old, new)
}

/// What is wrong with `changeset` as the batch update from `old` to `new`, checked without the library's
/// own apply: ranges, order, one role per index, and the kept elements filling the free slots in order
/// with their identity (and content, unless updated). Empty when it is right.
func problems<E: Diffable & Equatable>(in changeset: Changeset, from old: [E], to new: [E]) -> [String] {
    var found: [String] = []
    func ascending(_ indexes: [Int], below limit: Int, _ name: String) {
        if zip(indexes, indexes.dropFirst()).contains(where: { $0 >= $1 }) { found.append("\(name) not ascending") }
        if indexes.contains(where: { $0 < 0 || $0 >= limit }) { found.append("\(name) out of range") }
    }
    ascending(changeset.deletes, below: old.count, "deletes")
    ascending(changeset.inserts, below: new.count, "inserts")
    ascending(changeset.updates, below: old.count, "updates")
    ascending(changeset.moves.map(\.from).sorted(), below: old.count, "move sources")
    ascending(changeset.moves.map(\.to), below: new.count, "move targets")
    guard found.isEmpty else { return found }

    let oldRoles = changeset.deletes + changeset.updates + changeset.moves.map(\.from)
    let newRoles = changeset.inserts + changeset.moves.map(\.to)
    if Set(oldRoles).count != oldRoles.count { found.append("an old index plays two roles") }
    if Set(newRoles).count != newRoles.count { found.append("a new index plays two roles") }
    if old.count - changeset.deletes.count + changeset.inserts.count != new.count { found.append("counts disagree") }
    guard found.isEmpty else { return found }

    for move in changeset.moves where old[move.from].diffIdentifier != new[move.to].diffIdentifier {
        found.append("move \(move) joins different elements")
    }
    let leaving = Set(changeset.deletes + changeset.moves.map(\.from))
    let updated = Set(changeset.updates)
    let kept = old.indices.filter { !leaving.contains($0) }
    let arriving = Set(newRoles)
    let free = new.indices.filter { !arriving.contains($0) }
    for (oldIndex, newIndex) in zip(kept, free) {
        if old[oldIndex].diffIdentifier != new[newIndex].diffIdentifier {
            found.append("kept old \(oldIndex) lands on new \(newIndex), a different element")
        } else if updated.contains(oldIndex) == (old[oldIndex] == new[newIndex]) {
            let problem = updated.contains(oldIndex) ? "reported updated but equal" : "changed but not reported"
            found.append("old \(oldIndex) is \(problem)")
        }
    }
    return found
}

/// The fewest moves a batch update from `old` to `new` needs (identifiers distinct): the kept elements
/// minus a longest increasing run of their old indexes in new order, by the quadratic textbook method.
func fewestMoves<E: Diffable>(from old: [E], to new: [E]) -> Int {
    let position = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.diffIdentifier, $0) })
    let kept = new.compactMap { position[$0.diffIdentifier] }
    var longestEndingAt = [Int](repeating: 1, count: kept.count)
    for end in kept.indices {
        for start in 0..<end where kept[start] < kept[end] {
            longestEndingAt[end] = max(longestEndingAt[end], longestEndingAt[start] + 1)
        }
    }
    return kept.count - (longestEndingAt.max() ?? 0)
}

/// `fewestMoves` for long lists: the same count by binary search over run tails (O(n log n)).
func fewestMovesFast<E: Diffable>(from old: [E], to new: [E]) -> Int {
    let position = Dictionary(uniqueKeysWithValues: old.enumerated().map { ($1.diffIdentifier, $0) })
    let kept = new.compactMap { position[$0.diffIdentifier] }
    var tails: [Int] = []
    for value in kept {
        var low = 0, high = tails.count
        while low < high {
            let middle = (low + high) / 2
            if tails[middle] >= value { high = middle } else { low = middle + 1 }
        }
        if low == tails.count { tails.append(value) } else { tails[low] = value }
    }
    return kept.count - tails.count
}

/// Applies `changeset` to `old`, and says which new indexes the library read from `new`.
func applyRecordingReads<E>(_ changeset: Changeset, to old: [E], from new: [E]) -> (result: [E], reads: [Int]) {
    var reads: [Int] = []
    let result = old.applying(changeset) { index in
        reads.append(index)
        return new[index]
    }
    return (result, reads)
}

/// The new indexes a changeset says must be read from the new list: inserts, move targets, and the new
/// places of updated elements.
func expectedReads<E: Diffable>(_ changeset: Changeset, from old: [E], to new: [E]) -> [Int] {
    let updatedIDs = Set(changeset.updates.map { old[$0].diffIdentifier })
    let arriving = Set(changeset.inserts + changeset.moves.map(\.to))
    let updatedPlaces = new.indices.filter { updatedIDs.contains(new[$0].diffIdentifier) && !arriving.contains($0) }
    return (changeset.inserts + changeset.moves.map(\.to) + updatedPlaces).sorted()
}
