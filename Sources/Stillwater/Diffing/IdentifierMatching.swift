/// Which old element each new element is (and the reverse): the first half of every diff.
///
/// `oldToNew[i]` is the new index of old element `i`, or -1 when it has no partner (it was deleted);
/// `newToOld[j]` is the old index of new element `j`, or -1 (it was inserted). Pairs are one-to-one.
@usableFromInline
struct IdentifierMatch {
    @usableFromInline var oldToNew: [Int]
    @usableFromInline var newToOld: [Int]

    @inlinable
    init(oldToNew: [Int], newToOld: [Int]) {
        self.oldToNew = oldToNew
        self.newToOld = newToOld
    }

    /// Pairs the elements of two lists by identifier, Heckel style, in time linear in the lengths.
    ///
    /// With distinct identifiers, every identifier is hashed once per list: old elements go into one table (identifier -> old index,
    /// or "more than once"), new elements look themselves up in it. An identifier found exactly once in each
    /// list pairs its two elements. When some identifier occurs more than once, two more passes run:
    /// pairs are extended to equal neighbours (forwards, then backwards), and the occurrences still
    /// unpaired are paired in order, the k-th left in old with the k-th left in new.
    ///
    /// - Parameters:
    ///   - oldCount: The length of the old list.
    ///   - newCount: The length of the new list.
    ///   - oldID: The identifier of the old element at an index.
    ///   - newID: The identifier of the new element at an index.
    @inlinable
    init<ID: Hashable>(oldCount: Int, newCount: Int, oldID: (Int) -> ID, newID: (Int) -> ID) {
        // The table maps an identifier to its old index (with `claimed` set once a new element paired
        // with it, and `repeated` set once a second one did), or to -2 when it occurs more than once in
        // old. Marks, beside the final -1 (unpaired) and indexes (paired):
        //   newToOld -2: the identifier is in old, but not exactly once in each list;
        //   oldToNew -3: unique in old, but its identifier occurs more than once in new.
        // Each new element reads and updates its table entry in one lookup, so the table's memory is
        // touched once per element of each list, as when building the dictionary alone.
        var table = [ID: Int](minimumCapacity: oldCount)
        var hasRepeats = false
        for index in 0..<oldCount {
            let id = oldID(index)
            if table.updateValue(index, forKey: id) != nil {
                table[id] = -2
                hasRepeats = true
            }
        }
        var oldToNew = [Int](repeating: -1, count: oldCount)
        var newToOld = [Int](repeating: -1, count: newCount)
        for index in 0..<newCount {
            guard let entry = Self.claim(&table[newID(index)]) else { continue }  // not in old: inserted
            if entry < 0 {
                newToOld[index] = -2
                hasRepeats = true
            } else if entry & Self.claimed == 0 {
                oldToNew[entry] = index
                newToOld[index] = entry
            } else {
                // A second occurrence in new: no occurrence of this identifier is a unique pair.
                hasRepeats = true
                let oldIndex = entry & ~(Self.claimed | Self.repeated)
                if entry & Self.repeated == 0 { newToOld[oldToNew[oldIndex]] = -2 }
                oldToNew[oldIndex] = -3
                newToOld[index] = -2
            }
        }
        self.init(oldToNew: oldToNew, newToOld: newToOld)
        if hasRepeats {
            pairRepeats(table: table, oldID: oldID, newID: newID)
        }
    }

    /// The flag of a table entry whose old element a new element claimed.
    @inlinable static var claimed: Int { 1 << 61 }
    /// The flag of a table entry that more than one new element claimed.
    @inlinable static var repeated: Int { 1 << 60 }

    /// Claims the table entry `slot` for a new element: returns the entry as it was, and flags it
    /// claimed (or repeated, when it already was claimed). `nil` stays `nil`; -2 stays -2.
    @inlinable
    static func claim(_ slot: inout Int?) -> Int? {
        guard let entry = slot else { return nil }
        if entry >= 0 { slot = entry & claimed == 0 ? entry | claimed : entry | repeated }
        return entry
    }

    /// The passes that run only when an identifier occurs more than once: extend pairs to neighbours,
    /// then pair what is left in order. Clears every mark.
    @inlinable
    mutating func pairRepeats<ID: Hashable>(table: [ID: Int], oldID: (Int) -> ID, newID: (Int) -> ID) {
        let oldCount = oldToNew.count, newCount = newToOld.count
        func isOpen(old index: Int) -> Bool { oldToNew[index] == -1 || oldToNew[index] == -3 }
        func pair(old: Int, new: Int) {
            oldToNew[old] = new
            newToOld[new] = old
        }
        // Forwards: the element after a pair pairs with the element after its partner, when equal.
        if newCount > 1 {
            for index in 0..<newCount - 1 {
                let partner = newToOld[index]
                guard partner >= 0, partner + 1 < oldCount, newToOld[index + 1] == -2,
                      isOpen(old: partner + 1), oldID(partner + 1) == newID(index + 1) else { continue }
                pair(old: partner + 1, new: index + 1)
            }
            // Backwards: the same for the element before a pair.
            for index in stride(from: newCount - 1, to: 0, by: -1) {
                let partner = newToOld[index]
                guard partner > 0, newToOld[index - 1] == -2,
                      isOpen(old: partner - 1), oldID(partner - 1) == newID(index - 1) else { continue }
                pair(old: partner - 1, new: index - 1)
            }
        }
        // In order: chain the open old occurrences of each repeated identifier, ascending, then hand them
        // out to the open new occurrences as they come.
        var heads: [ID: Int] = [:]
        var next = [Int](repeating: -1, count: oldCount)
        for index in stride(from: oldCount - 1, through: 0, by: -1) where isOpen(old: index) {
            let id = oldID(index)
            guard oldToNew[index] == -3 || table[id] == -2 else { continue }  // absent from new
            next[index] = heads[id] ?? -1
            heads[id] = index
        }
        for index in 0..<newCount where newToOld[index] == -2 {
            let id = newID(index)
            guard let head = heads[id], head >= 0 else {
                newToOld[index] = -1
                continue
            }
            heads[id] = next[head]
            pair(old: head, new: index)
        }
        for index in 0..<oldCount where oldToNew[index] < 0 { oldToNew[index] = -1 }
    }
}
