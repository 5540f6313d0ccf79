extension Array where Element: DiffableSection {
    /// The sections this changeset turns `self` into: kept sections and items are carried over, and what
    /// is new, moved or updated is read from `newSection` and `newItem`.
    ///
    /// An inserted section is `newSection(t)` as it is, items included. A surviving section keeps its old
    /// value, or takes `newSection(t)` when it moved or was updated, and in both cases gets its items from
    /// its old items with the item changes applied (inserted, moved and updated items read from `newItem`).
    ///
    /// ```swift
    /// let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
    /// let new = [ListSection("Today", items: ["milk"]), ListSection("Later", items: ["eggs", "bread"])]
    /// let changeset = SectionedChangeset(from: old, to: new)
    /// let result = old.applying(changeset, newSection: { new[$0] }, newItem: { new[$0.section].items[$0.item] })
    /// print(result.map(\.items))
    /// // Prints "[[\"milk\"], [\"eggs\", \"bread\"]]"
    /// ```
    ///
    /// - Parameters:
    ///   - changeset: The changes from `self` to the new sections.
    ///   - newSection: Returns the section at a new section index; called for inserted, moved and updated
    ///     sections only.
    ///   - newItem: Returns the item at a new path; called for inserted, moved and updated items only.
    /// - Precondition: Every index and path of `changeset` is in range and plays one role only, and no
    ///   item change names a deleted or inserted section.
    /// - Complexity: O(*n* + *m*) for *n* and *m* sections and items in all.
    @inlinable
    public func applying(
        _ changeset: SectionedChangeset,
        newSection: (_ sectionIndex: Int) throws -> Element,
        newItem: (_ path: SectionedChangeset.ItemPath) throws -> Element.Item
    ) rethrows -> [Element] {
        let plan = SectionedLayout(changeset, oldItemCounts: map(\.items.count))
        var result: [Element] = []
        result.reserveCapacity(plan.sections.count)
        for (sectionIndex, slot) in plan.sections.enumerated() {
            guard slot.old >= 0 else {
                result.append(try newSection(sectionIndex))
                continue
            }
            let oldItems = self[slot.old].items
            var section = slot.readsNew ? try newSection(sectionIndex) : self[slot.old]
            section.items = try [Element.Item].build(plan.items[sectionIndex], carrying: oldItems) {
                try newItem(SectionedChangeset.ItemPath(section: sectionIndex, item: $0))
            }
            result.append(section)
        }
        return result
    }

    /// Turns `self` into the sections `changeset` describes. See ``applying(_:newSection:newItem:)``.
    ///
    /// - Precondition: As ``applying(_:newSection:newItem:)``.
    /// - Complexity: O(*n* + *m*).
    @inlinable
    public mutating func apply(
        _ changeset: SectionedChangeset,
        newSection: (_ sectionIndex: Int) throws -> Element,
        newItem: (_ path: SectionedChangeset.ItemPath) throws -> Element.Item
    ) rethrows {
        self = try applying(changeset, newSection: newSection, newItem: newItem)
    }

    /// The sections this changeset turns `self` into, reading what is new, moved or updated from
    /// `newSections` (the sections the changeset was computed to).
    ///
    /// - Precondition: As ``applying(_:newSection:newItem:)``, and `newSections` is the list the changeset
    ///   was computed to.
    /// - Complexity: O(*n* + *m*).
    @inlinable
    public func applying(_ changeset: SectionedChangeset, newSections: [Element]) -> [Element] {
        applying(changeset, newSection: { newSections[$0] }, newItem: { newSections[$0.section].items[$0.item] })
    }
}

/// Where each section, and each item of each surviving section, of a new sectioned list comes from.
@usableFromInline
struct SectionedLayout {
    /// One slot per new section.
    @usableFromInline let sections: [ListSlot]
    /// One list of slots per new section (empty for inserted sections).
    @usableFromInline let items: [[ListSlot]]

    /// The layout `changeset` gives old sections holding `oldItemCounts` items each.
    @usableFromInline
    init(_ changeset: SectionedChangeset, oldItemCounts: [Int]) {
        let sections = changeset.sections.slots(oldCount: oldItemCounts.count)
        var partner = [Int](repeating: -1, count: oldItemCounts.count)  // new index of each old section
        for (index, slot) in sections.enumerated() where slot.old >= 0 { partner[slot.old] = index }

        var leaving = [[Int]](repeating: [], count: oldItemCounts.count)
        var updated = [[Int]](repeating: [], count: oldItemCounts.count)
        var arriving = [[Int]](repeating: [], count: sections.count)
        func surviving(_ path: SectionedChangeset.ItemPath, _ side: String, _ isSurviving: (Int) -> Bool) -> Int {
            precondition(isSurviving(path.section), """
                SectionedChangeset: \(side) item path \(path) names no surviving section; \
                item changes name only sections that are neither deleted nor inserted
                """)
            return path.section
        }
        func oldSection(of path: SectionedChangeset.ItemPath) -> Int {
            surviving(path, "old") { $0 >= 0 && $0 < partner.count && partner[$0] >= 0 }
        }
        func newSection(of path: SectionedChangeset.ItemPath) -> Int {
            surviving(path, "new") { $0 >= 0 && $0 < sections.count && sections[$0].old >= 0 }
        }
        for path in changeset.itemDeletes { leaving[oldSection(of: path)].append(path.item) }
        for path in changeset.itemUpdates { updated[oldSection(of: path)].append(path.item) }
        for path in changeset.itemInserts { arriving[newSection(of: path)].append(path.item) }
        for move in changeset.itemMoves {
            leaving[oldSection(of: move.from)].append(move.from.item)
            arriving[newSection(of: move.to)].append(move.to.item)
        }
        self.sections = sections
        self.items = sections.enumerated().map { index, slot in
            guard slot.old >= 0 else { return [] }
            return ListSlot.layout(
                oldCount: oldItemCounts[slot.old], leaving: leaving[slot.old], arriving: arriving[index],
                updated: updated[slot.old], what: "SectionedChangeset, section \(slot.old) -> \(index)"
            )
        }
    }
}
