/// Joins two lists that changed from one common list: ours (this program's) and theirs (what another
/// program saved to the file meanwhile), so that neither side's changes are lost.
///
/// Items are matched by identity. The rules, item by item:
/// - An item only one side changed (title, done, or its other fields) takes that side's version. When
///   both changed the same item differently, ours wins field by field and a conflict is reported.
/// - An item one side deleted is gone, unless the other side changed it: then it is kept, and a
///   conflict is reported.
/// - Items either side added are all kept. When theirs added items too, ours are renumbered, in order,
///   from theirs' ``TodoList/nextID``, so no identity is used twice.
/// - Order: ours when only we reordered the items both sides kept, theirs otherwise; an item only one
///   side has goes after the item that precedes it on that side.
///
/// ```swift
/// let base = TodoList(titles: ["milk", "eggs"])
/// var ours = base, theirs = base
/// TodoAction.toggle(id: 1).reduce(&ours)
/// TodoAction.add("tea").reduce(&theirs)
/// let merge = TodoMerge(base: base, ours: ours, theirs: theirs)
/// print(merge.list.items.map { "\($0.id) \($0.title) \($0.isDone)" }, merge.conflicts)
/// // Prints "[\"1 milk true\", \"2 eggs false\", \"3 tea false\"] []"
/// ```
///
/// - Complexity: O(n) for n items on the three sides.
public struct TodoMerge: Equatable, Sendable {
    /// The joined list.
    public let list: TodoList
    /// What both sides changed, one sentence each (empty when the changes did not touch each other).
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

        // Which version of each item survives, by identity (nil: deleted).
        var kept: [Int: TodoItem] = [:]
        for (id, original) in baseItems {
            switch (ourItems[id], theirItems[id]) {
            case (let mine?, let other?):
                kept[id] = Self.join(original, mine, other, conflicts: &conflicts)
            case (let mine?, nil) where mine != original:
                kept[id] = mine
                conflicts.append("\"\(mine.title)\" was deleted by the other program but changed here; it was kept")
            case (nil, let other?) where other != original:
                kept[id] = other
                conflicts.append("\"\(other.title)\" was deleted here but changed by the other program; it was kept")
            default:
                break
            }
        }
        for (id, other) in theirItems where baseItems[id] == nil { kept[id] = other }

        // Our new items, renumbered in order from theirs' nextID when theirs handed out identities too
        // (ours may have handed out the same ones), or when an identity is taken (after the identities
        // ran out, both sides reuse free ones). `identities` hands out what no kept item has.
        let theyAllocated = theirs.nextID > base.nextID
        var identities = TodoList(
            items: Array(kept.values), nextID: theyAllocated ? theirs.nextID : max(ours.nextID, theirs.nextID))
        var renumbered: [Int: Int] = [:]
        for item in ours.items where baseItems[item.id] == nil {
            var id = item.id
            if theyAllocated || kept[id] != nil {
                id = identities.allocateID()
                renumbered[item.id] = id
            }
            let added = TodoItem(id: id, title: item.title, isDone: item.isDone, otherFields: item.otherFields)
            kept[id] = added
            identities.items.append(added)
        }
        let ourOrder = ours.items.map { renumbered[$0.id] ?? $0.id }
        let theirOrder = theirs.items.map(\.id)
        let shared = Set(baseItems.keys)
        let weReordered = ourOrder.filter(shared.contains) != base.items.map(\.id).filter(Set(ourOrder).contains)
        let theyReordered = theirOrder.filter(shared.contains) != base.items.map(\.id).filter(Set(theirOrder).contains)
        let (primary, secondary) = weReordered && !theyReordered ? (ourOrder, theirOrder) : (theirOrder, ourOrder)
        let order = Self.interleave(primary, secondary).filter { kept[$0] != nil }

        var merged = TodoList(items: order.map { kept[$0]! }, nextID: max(identities.nextID, ours.nextID), otherFields: theirs.otherFields)
        for (name, value) in ours.otherFields where base.otherFields[name] != value { merged.otherFields[name] = value }
        list = merged
        self.conflicts = conflicts
        self.renumbered = renumbered
    }

    /// One item both sides kept, field by field: a field only one side changed takes that side's value;
    /// a field both changed takes ours, and is reported.
    private static func join(_ base: TodoItem, _ ours: TodoItem, _ theirs: TodoItem, conflicts: inout [String]) -> TodoItem {
        func pick<Value: Equatable>(_ field: KeyPath<TodoItem, Value>, _ name: String) -> Value {
            let mine = ours[keyPath: field], other = theirs[keyPath: field]
            if mine == base[keyPath: field] { return other }
            if other != base[keyPath: field], other != mine {
                conflicts.append("both programs changed the \(name) of \"\(base.title)\"; this one's was kept")
            }
            return mine
        }
        return TodoItem(
            id: base.id, title: pick(\.title, "title"), isDone: pick(\.isDone, "done mark"),
            otherFields: pick(\.otherFields, "other fields"))
    }

    /// Every identity of `primary` in its order, with each identity only `secondary` has placed after
    /// the identity that precedes it in `secondary` (at the front when none does), except those after
    /// the last identity the two share: items added at the end stay at the end, after primary's.
    private static func interleave(_ primary: [Int], _ secondary: [Int]) -> [Int] {
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
        var order = after[nil] ?? []
        for id in primary {
            order.append(id)
            order += after[id] ?? []
        }
        return order + pending
    }
}
