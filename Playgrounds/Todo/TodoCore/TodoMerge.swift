/// Joins two lists that changed from one common list: ours (this program's, saved now) and theirs
/// (what another program saved to the file meanwhile), so that nothing a user meant is lost silently.
///
/// Items are matched by identity. Ours is the later of the two saves (theirs is in the file already),
/// and a save follows its change within the save delay, so "the later change" below is ours. The rules
/// for one item both sides touched (the README's merge table says the same, pair by pair):
/// - **A delete wins.** An item one side deleted stays deleted, whatever the other side did to it
///   (renamed, ticked, moved): deleting is deliberate, and a deleted item coming back surprises.
/// - **Different fields are both kept.** A rename on one side and a tick on the other: the item is
///   renamed and ticked. The same for a move and a rename or a tick.
/// - **The same field changed differently: the later change wins.** Two renames keep ours; two moves
///   of one item keep ours' place. (Two ticks cannot differ: both sides start from the same mark.)
/// - **Items either side added are all kept.** When theirs added items too, ours are renumbered, in
///   order, from theirs' ``TodoList/nextID``, so no identity is used twice; they come after theirs.
/// - **Order:** theirs' order, with each item ours moved put back after the item that precedes it in
///   ours, and each added item after the item that precedes it on its side.
///
/// Every item both sides touched gets one sentence in ``conflicts``, saying what the merge did to it.
///
/// ```swift
/// let base = TodoList(titles: ["milk", "eggs"])
/// var ours = base, theirs = base
/// TodoAction.delete(id: 1).reduce(&ours)
/// TodoAction.toggle(id: 1).reduce(&theirs)
/// let merge = TodoMerge(base: base, ours: ours, theirs: theirs)
/// print(merge.list.items.map(\.title), merge.conflicts)
/// // Prints "[\"eggs\"] [\"\\\"milk\\\" stays deleted (ticked in another window)\"]"
/// ```
///
/// - Complexity: O(n log n) for n items on the three sides.
public struct TodoMerge: Equatable, Sendable {
    /// The joined list.
    public let list: TodoList
    /// What the merge did to each item both sides changed, one sentence each, in the base list's order
    /// (`"milk" stays deleted (ticked in another window)`); empty when the changes did not meet.
    public let conflicts: [String]
    /// The items `ours` added that the joined list holds under another identity (theirs had handed out
    /// the same one): each old identity with its new one. Empty when no identity changed. Whoever kept
    /// an identity of `ours` (a cursor, an open edit) moves it along with this.
    public let renumbered: [Int: Int]

    /// Joins `ours` and `theirs`, both changed from `base`.
    public init(base: TodoList, ours: TodoList, theirs: TodoList) {
        if theirs == base || ours == theirs {
            list = ours
            conflicts = []
            self.renumbered = [:]
            return
        }
        if ours == base {
            list = theirs
            conflicts = []
            self.renumbered = [:]
            return
        }
        var conflicts: [String] = []
        let baseItems = Dictionary(base.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let ourItems = Dictionary(ours.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let theirItems = Dictionary(theirs.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let ourMoves = Self.moved(from: base, in: ours), theirMoves = Self.moved(from: base, in: theirs)

        // Which version of each item survives, by identity (nil: deleted), and what to say about it.
        var kept: [Int: TodoItem] = [:]
        var seen = Set<Int>()
        for original in base.items where seen.insert(original.id).inserted {
            let id = original.id
            let mine = Change(original, ourItems[id], moved: ourMoves.contains(id))
            let other = Change(original, theirItems[id], moved: theirMoves.contains(id))
            switch (ourItems[id], theirItems[id]) {
            case (let mine?, let other?):
                kept[id] = Self.join(original, mine, other)
            case (_?, nil) where !mine.isEmpty:
                conflicts.append("\"\(original.title)\" was deleted in another window and stays deleted (\(mine) here)")
            case (nil, _?) where !other.isEmpty:
                conflicts.append("\"\(original.title)\" stays deleted (\(other) in another window)")
            case (nil, nil) where ours != base && theirs != base:
                conflicts.append("\"\(original.title)\" was deleted in both windows")
            default:
                break
            }
            if let note = Self.note(original, kept[id], mine, other) { conflicts.append(note) }
        }
        for (id, other) in theirItems where baseItems[id] == nil { kept[id] = other }

        // Our new items, renumbered in order from theirs' nextID when theirs handed out identities too
        // (ours may have handed out the same ones), or when an identity is taken (after the identities
        // ran out, both sides reuse free ones). `identities` hands out what no kept item has.
        let theyAllocated = theirs.nextID > base.nextID
        var identities = TodoList(
            items: Array(kept.values), nextID: theyAllocated ? theirs.nextID : max(ours.nextID, theirs.nextID))
        var renumbered: [Int: Int] = [:]
        let theirTitles = Set(theirs.items.filter { baseItems[$0.id] == nil }.map(\.title))
        for item in ours.items where baseItems[item.id] == nil {
            var id = item.id
            if theyAllocated || kept[id] != nil {
                id = identities.allocateID()
                renumbered[item.id] = id
            }
            let added = TodoItem(id: id, title: item.title, isDone: item.isDone, otherFields: item.otherFields)
            kept[id] = added
            identities.items.append(added)
            if theirTitles.contains(item.title) {
                conflicts.append("\"\(item.title)\" was added in both windows; both are kept")
            }
        }
        // Theirs' order, with the items ours moved taken out and put back after their predecessor in ours.
        let ourOrder = ours.items.map { renumbered[$0.id] ?? $0.id }
        let order = Self.interleave(
            theirs.items.map(\.id).filter { !ourMoves.contains($0) }, ourOrder, anchored: ourMoves)
            .filter { kept[$0] != nil }

        var merged = TodoList(items: order.map { kept[$0]! }, nextID: max(identities.nextID, ours.nextID), otherFields: theirs.otherFields)
        for (name, value) in ours.otherFields where base.otherFields[name] != value { merged.otherFields[name] = value }
        list = merged
        self.conflicts = conflicts
        self.renumbered = renumbered
    }

    /// What one side did to one item of the base list: which of its fields changed, and whether it left
    /// its place. Described as the notes say it (`renamed to "oat milk" and ticked`).
    private struct Change: CustomStringConvertible {
        var title: String?
        var isDone: Bool?
        var otherFields = false
        var moved = false

        init(_ original: TodoItem, _ changed: TodoItem?, moved: Bool) {
            guard let changed else { return }
            if changed.title != original.title { title = changed.title }
            if changed.isDone != original.isDone { isDone = changed.isDone }
            otherFields = changed.otherFields != original.otherFields
            self.moved = moved
        }

        var isEmpty: Bool { title == nil && isDone == nil && !otherFields && !moved }

        /// The changes, the new title named only when `namingTitle` (a note that starts with the merged
        /// title has said it).
        func parts(namingTitle: Bool) -> [String] {
            var parts: [String] = []
            if let title { parts.append(namingTitle ? "renamed to \"\(title)\"" : "renamed") }
            if let isDone { parts.append(isDone ? "ticked" : "unticked") }
            if otherFields { parts.append("its other fields changed") }
            if moved { parts.append("moved") }
            return parts
        }

        var description: String { said(namingTitle: true) }

        func said(namingTitle: Bool) -> String {
            let parts = parts(namingTitle: namingTitle)
            return parts.count < 2 ? parts.joined() : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
        }
    }

    /// The sentence about an item both sides kept and both changed: what each side's change became.
    private static func note(_ original: TodoItem, _ merged: TodoItem?, _ ours: Change, _ theirs: Change) -> String? {
        guard let merged, !ours.isEmpty, !theirs.isEmpty else { return nil }
        var said: [String] = []
        var mineOnly = ours, otherOnly = theirs
        if let mine = ours.title, let other = theirs.title {
            said.append(mine == other
                ? "renamed the same in both windows"
                : "renamed in both windows; kept the later rename, made here (another window's was \"\(other)\")")
            mineOnly.title = nil
            otherOnly.title = nil
        }
        if let mark = ours.isDone, theirs.isDone != nil {
            said.append("\(mark ? "ticked" : "unticked") in both windows")
            mineOnly.isDone = nil
            otherOnly.isDone = nil
        }
        if ours.otherFields, theirs.otherFields {
            said.append("its other fields changed in both windows; kept the later ones, made here")
            mineOnly.otherFields = false
            otherOnly.otherFields = false
        }
        if ours.moved, theirs.moved {
            said.append("moved in both windows; kept the later place, made here")
            mineOnly.moved = false
            otherOnly.moved = false
        }
        if !mineOnly.isEmpty, !otherOnly.isEmpty {
            said.append("\(mineOnly.said(namingTitle: false)) here and \(otherOnly.said(namingTitle: false)) in another window, both kept")
        } else if !mineOnly.isEmpty {
            said.append("also \(mineOnly.said(namingTitle: false)) here")
        } else if !otherOnly.isEmpty {
            said.append("also \(otherOnly.said(namingTitle: false)) in another window")
        }
        return "\"\(merged.title)\": " + said.joined(separator: "; ")
    }

    /// One item both sides kept, field by field: a field only one side changed takes that side's value;
    /// a field both changed takes ours (the later change).
    private static func join(_ base: TodoItem, _ ours: TodoItem, _ theirs: TodoItem) -> TodoItem {
        func pick<Value: Equatable>(_ field: KeyPath<TodoItem, Value>) -> Value {
            ours[keyPath: field] == base[keyPath: field] ? theirs[keyPath: field] : ours[keyPath: field]
        }
        return TodoItem(id: base.id, title: pick(\.title), isDone: pick(\.isDone), otherFields: pick(\.otherFields))
    }

    /// The identities of the items `side` may have moved: those of base's items `side` kept that are
    /// not in every longest run of items still in base's order. An item moved past its neighbour and
    /// that neighbour moved the other way look the same, so both count as moved.
    ///
    /// - Complexity: O(n log n).
    static func moved(from base: TodoList, in side: TodoList) -> Set<Int> {
        var rank: [Int: Int] = [:]
        for (index, item) in base.items.enumerated() where rank[item.id] == nil { rank[item.id] = index }
        let sequence = side.items.compactMap { item in rank[item.id].map { (id: item.id, rank: $0) } }
        let ending = longestRuns(sequence.map(\.rank))
        let starting = Array(longestRuns(sequence.reversed().map { -$0.rank }).reversed())
        let longest = ending.max() ?? 0
        var levels: [Int: Int] = [:]
        for index in sequence.indices where ending[index] + starting[index] - 1 == longest {
            levels[ending[index], default: 0] += 1
        }
        var moved = Set<Int>()
        for (index, entry) in sequence.enumerated()
        where ending[index] + starting[index] - 1 != longest || levels[ending[index]] != 1 {
            moved.insert(entry.id)
        }
        return moved
    }

    /// For each value, the length of the longest strictly increasing run of `values` that ends there.
    private static func longestRuns(_ values: [Int]) -> [Int] {
        var tails: [Int] = []
        return values.map { value in
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if tails[middle] < value { low = middle + 1 } else { high = middle }
            }
            if low == tails.count { tails.append(value) } else { tails[low] = value }
            return low + 1
        }
    }

    /// Every identity of `primary` in its order, with each identity only `secondary` has placed after
    /// the identity that precedes it in `secondary` (at the front when none does), except those after
    /// the last identity the two share that are not `anchored`: items added at the end stay at the end,
    /// after primary's, while a moved item goes back after its predecessor.
    private static func interleave(_ primary: [Int], _ secondary: [Int], anchored: Set<Int>) -> [Int] {
        let inPrimary = Set(primary)
        var after: [Int?: [Int]] = [:]
        var previous: Int?
        var pending: [Int] = []
        for id in secondary {
            guard inPrimary.contains(id) else {
                pending.append(id)
                continue
            }
            after[previous, default: []] += pending
            pending = []
            previous = id
        }
        after[previous, default: []] += pending.filter(anchored.contains)
        pending.removeAll(where: anchored.contains)
        var order = after[nil] ?? []
        for id in primary {
            order.append(id)
            order += after[id] ?? []
        }
        return order + pending
    }
}
