extension Array {
    /// The array this changeset turns `self` into: kept elements are carried over, and each insert, move
    /// target and updated element is read from `newElement`.
    ///
    /// This is how a consumer that keeps its own copy of a list (rendered rows, cached layouts, a
    /// client's replica) follows a ``Changeset``: it pays only for what changed. `self` must be the list
    /// the changeset was computed from (or one of the same length that mirrors it).
    ///
    /// ```swift
    /// let old = ["a", "b", "c"]
    /// let new = ["c", "a", "d"]
    /// let changeset = Changeset(from: old, to: new)
    /// print(old.applying(changeset) { new[$0] })
    /// // Prints "[\"c\", \"a\", \"d\"]"
    /// ```
    ///
    /// - Parameters:
    ///   - changeset: The changes from `self` to the new list.
    ///   - newElement: Returns the element at a new index. It is called once for each insert, each move
    ///     target and each updated element (at the element's new index), in ascending order, and for
    ///     nothing else.
    /// - Precondition: Every index of `changeset` is in range (old indexes below `count`, new ones below
    ///   `count - deletes.count + inserts.count`) and plays one role only.
    /// - Complexity: O(*n* + *m*) for lists of *n* and *m* elements.
    @inlinable
    public func applying(
        _ changeset: Changeset, newElement: (_ newIndex: Int) throws -> Element
    ) rethrows -> [Element] {
        try Self.build(changeset.slots(oldCount: count), carrying: self, reading: newElement)
    }

    /// Turns `self` into the array `changeset` describes, reading each insert, move target and updated
    /// element from `newElement`. See ``applying(_:newElement:)``.
    ///
    /// ```swift
    /// var lines = ["milk", "eggs"]
    /// lines.apply(Changeset(deletes: [0], inserts: [1])) { _ in "bread" }
    /// print(lines)
    /// // Prints "[\"eggs\", \"bread\"]"
    /// ```
    ///
    /// - Precondition: As ``applying(_:newElement:)``.
    /// - Complexity: O(*n* + *m*).
    @inlinable
    public mutating func apply(_ changeset: Changeset, newElement: (_ newIndex: Int) throws -> Element) rethrows {
        self = try applying(changeset, newElement: newElement)
    }

    /// The array this changeset turns `self` into, reading inserted, moved and updated elements from
    /// `newElements` (the new list the changeset was computed to).
    ///
    /// - Precondition: As ``applying(_:newElement:)``, and `newElements` has the resulting length.
    /// - Complexity: O(*n* + *m*).
    @inlinable
    public func applying(_ changeset: Changeset, newElements: [Element]) -> [Element] {
        let slots = changeset.slots(oldCount: count)
        precondition(slots.count == newElements.count, """
            newElements has \(newElements.count) elements, the changeset makes \(slots.count): \
            pass the list it was computed to
            """)
        return Self.build(slots, carrying: self, reading: { newElements[$0] })
    }

    /// Fills the new array slot by slot from `old` or from `newElement`.
    @inlinable
    static func build(
        _ slots: [ListSlot], carrying old: [Element], reading newElement: (Int) throws -> Element
    ) rethrows -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(slots.count)
        for (index, slot) in slots.enumerated() {
            result.append(slot.readsNew ? try newElement(index) : old[slot.old])
        }
        return result
    }
}

/// Where one element of a new list comes from.
@usableFromInline
struct ListSlot {
    /// The old index of the element it holds (kept, updated or moved here), or -1 for an inserted one.
    @usableFromInline let old: Int
    /// Whether its content is read from the new list (inserts, move targets and updates).
    @usableFromInline let readsNew: Bool

    @usableFromInline
    init(old: Int, readsNew: Bool) {
        self.old = old
        self.readsNew = readsNew
    }

    /// The slots of a new list made from an old one of `oldCount` elements: the old indexes `leaving` go,
    /// the new indexes `arriving` come (from nowhere), `moves` take old indexes to new ones, and the old
    /// indexes `updated` change. Kept elements fill the other slots, in order. `what` names the list in
    /// messages. Stops the program, with the reason, when the indexes do not fit (a programming error:
    /// the changeset was computed from another list); ``checkedLayout(oldCount:leaving:arriving:moves:updated:what:)``
    /// throws instead, for changesets that came from outside.
    @usableFromInline
    static func layout(
        oldCount: Int, leaving: [Int], arriving: [Int], moves: [Changeset.Move] = [], updated: [Int],
        what: @autoclosure () -> String
    ) -> [ListSlot] {
        do {
            return try checkedLayout(
                oldCount: oldCount, leaving: leaving, arriving: arriving, moves: moves, updated: updated, what: what())
        } catch {
            preconditionFailure(error.message)
        }
    }

    /// ``layout(oldCount:leaving:arriving:moves:updated:what:)``, throwing when an index is out of range or
    /// plays two roles.
    @usableFromInline
    static func checkedLayout(
        oldCount: Int, leaving: [Int], arriving: [Int], moves: [Changeset.Move] = [], updated: [Int],
        what: @autoclosure () -> String
    ) throws(ListPatchError) -> [ListSlot] {
        // Roles of old indexes: 0 kept, 1 leaving (deleted or moved), 2 updated.
        var roles = [UInt8](repeating: 0, count: max(oldCount, 0))
        func claim(old index: Int, as role: UInt8) throws(ListPatchError) {
            guard index >= 0 && index < oldCount else {
                throw ListPatchError("""
                    \(what()): old index \(index) is out of range 0..<\(oldCount); \
                    apply the changeset to the list it was computed from
                    """)
            }
            guard roles[index] == 0 else {
                throw ListPatchError("""
                    \(what()): old index \(index) appears twice among deletes, move sources and updates; \
                    a changeset gives each index one role
                    """)
            }
            roles[index] = role
        }
        for index in leaving { try claim(old: index, as: 1) }
        for move in moves { try claim(old: move.from, as: 1) }
        for index in updated { try claim(old: index, as: 2) }
        // Every old index leaves at most once (checked above), so this is never below 0.
        let newCount = oldCount - leaving.count + arriving.count
        // Sources of arriving slots: -2 not arriving, -1 inserted, else the old index moved here.
        var sources = [Int](repeating: -2, count: newCount)
        func claim(new index: Int, from source: Int) throws(ListPatchError) {
            guard index >= 0 && index < newCount else {
                throw ListPatchError("""
                    \(what()): new index \(index) is out of range 0..<\(newCount); \
                    apply the changeset to the list it was computed from
                    """)
            }
            guard sources[index] == -2 else {
                throw ListPatchError("""
                    \(what()): new index \(index) appears twice among inserts and move targets; \
                    a changeset gives each index one role
                    """)
            }
            sources[index] = source
        }
        for index in arriving { try claim(new: index, from: -1) }
        for move in moves { try claim(new: move.to, from: move.from) }
        var slots: [ListSlot] = []
        slots.reserveCapacity(newCount)
        var kept = 0
        for source in sources {
            if source != -2 {
                slots.append(ListSlot(old: source, readsNew: true))
            } else {
                while roles[kept] == 1 { kept += 1 }
                slots.append(ListSlot(old: kept, readsNew: roles[kept] == 2))
                kept += 1
            }
        }
        return slots
    }
}

extension Changeset {
    /// Where each element of the list this changeset makes from `oldCount` elements comes from.
    @usableFromInline
    func slots(oldCount: Int) -> [ListSlot] {
        ListSlot.layout(oldCount: oldCount, leaving: deletes, arriving: inserts, moves: moves, updated: updates,
                        what: "Changeset")
    }
}
