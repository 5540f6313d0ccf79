/// The difference between two versions of a sectioned list, as one batch update of sections and items.
///
/// Sections are diffed like the elements of a ``Changeset`` (in ``sections``). Items are matched by
/// identifier across *all* sections, so an item that moved to another section is one ``itemMoves`` entry.
/// The index rules are those of a batch update:
///
/// - item deletes and updates, and the sources of item moves, are paths in the old list (old section
///   index, old item index); item inserts and the targets of item moves are paths in the new list;
/// - the items of a deleted section go with it, and the items of an inserted section come with it: no
///   item change names either. An item that leaves a deleted section for a surviving one is an insert in
///   its new place; an item that leaves a surviving section for an inserted one is a delete in its old place;
/// - a section that moved takes its items along; changes inside it are listed like any other section's;
/// - in each surviving section, the items named by no change keep their relative order and fill the item
///   positions that are neither inserts nor move targets, in order.
///
/// ```swift
/// let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
/// let new = [ListSection("Later", items: ["bread", "eggs"]), ListSection("Today", items: ["milk", "tea"])]
/// let changeset = SectionedChangeset(from: old, to: new)
/// print(changeset.sections, changeset.itemInserts, changeset.itemMoves)
/// // Prints "Changeset(moves: [1 -> 0]) [[1, 1]] [[0, 1] -> [0, 1]]"
/// ```
///
/// ``Swift/Array/applying(_:newSections:)`` turns the old sections into the new ones with it.
///
/// ## JSON
///
/// A sectioned changeset is `Codable`: the sections' ``Changeset`` (in its own JSON shape) and four lists
/// of item paths, a path as `[section, item]` and an item move as `[from, to]`:
///
/// ```json
/// {"sections": {"moves": [[1, 0]]}, "itemInserts": [[1, 1]], "itemMoves": [[[0, 1], [0, 1]]]}
/// ```
///
/// What is empty is left out when encoding, and a missing key decodes as empty. Decoding fails
/// (`DecodingError.dataCorrupted`) for an unknown key, a negative index, or an index or path with two
/// roles. The shape
/// is stable.
public struct SectionedChangeset: Equatable, Sendable {
    /// The position of an item: the index of its section and its index within that section.
    public struct ItemPath: Hashable, Comparable, Sendable {
        /// The index of the section.
        public var section: Int
        /// The index of the item within its section.
        public var item: Int

        /// The item at `item` in section `section`.
        @inlinable
        public init(section: Int, item: Int) {
            self.section = section
            self.item = item
        }

        /// Orders paths by section, then by item.
        @inlinable
        public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
            (lhs.section, lhs.item) < (rhs.section, rhs.item)
        }
    }

    /// An item that changed its position relative to the others, or its section: from its path in the old
    /// list to its path in the new one.
    public struct ItemMove: Hashable, Sendable {
        /// The item's path in the old list.
        public let from: ItemPath
        /// The item's path in the new list, where its new content is read.
        public let to: ItemPath

        /// A move of the item at old path `from` to new path `to`.
        @inlinable
        public init(from: ItemPath, to: ItemPath) {
            self.from = from
            self.to = to
        }
    }

    /// The changes of the sections themselves: deletes, inserts, moves, and updates of their own content
    /// (not of their items).
    public var sections: Changeset
    /// Old paths of the items that are gone from surviving sections, ascending.
    public var itemDeletes: [ItemPath]
    /// New paths of the items that are new in surviving sections, ascending.
    public var itemInserts: [ItemPath]
    /// Items that changed section, or their order within their section, by ascending `to`. An item that
    /// moved and changed is reported here only.
    public var itemMoves: [ItemMove]
    /// Old paths of items that stayed in place in their section but whose content changed, ascending.
    public var itemUpdates: [ItemPath]

    /// Whether the two lists were equal: no section and no item changed.
    @inlinable
    public var isEmpty: Bool {
        sections.isEmpty && itemDeletes.isEmpty && itemInserts.isEmpty && itemMoves.isEmpty && itemUpdates.isEmpty
    }

    /// A sectioned changeset made of the given lists, as they are.
    @inlinable
    public init(
        sections: Changeset = Changeset(), itemDeletes: [ItemPath] = [], itemInserts: [ItemPath] = [],
        itemMoves: [ItemMove] = [], itemUpdates: [ItemPath] = []
    ) {
        self.sections = sections
        self.itemDeletes = itemDeletes
        self.itemInserts = itemInserts
        self.itemMoves = itemMoves
        self.itemUpdates = itemUpdates
    }

    /// The changeset that turns the sections `old` into `new`, comparing items with `==`, and sections
    /// with `==` once their items are set aside.
    ///
    /// Moves are as few as possible: an item that changed section always moves; among the items that
    /// stayed in their section, those of a longest run whose old order held stay, the others move.
    ///
    /// - Note: Duplicate identifiers (of sections, or of items anywhere in the list) are allowed and
    ///   paired as ``Changeset/init(from:to:)`` describes; the result is valid, though perhaps not the
    ///   smallest.
    /// - Complexity: O(*n* + *m*) hashing for *n* and *m* sections and items in all; at worst
    ///   O(*m* log *m*) other work.
    @inlinable
    public init<S: DiffableSection>(from old: [S], to new: [S]) where S: Equatable, S.Item: Equatable {
        self.init(from: old, to: new, isSectionEqual: { lhs, rhs in
            var lhs = lhs, rhs = rhs
            lhs.items = []
            rhs.items = []
            return lhs == rhs
        }, isItemEqual: ==)
    }

    /// The changeset that turns the sections `old` into `new`, comparing sections' own content with
    /// `isSectionEqual` and items with `isItemEqual`.
    ///
    /// - Parameters:
    ///   - old: The sections before the change.
    ///   - new: The sections after the change.
    ///   - isSectionEqual: Returns `true` when a section's own content (not its items) is unchanged.
    ///     Called only for sections that stay in place.
    ///   - isItemEqual: Returns `true` when an item's content is unchanged. Called only for items that stay
    ///     in place in their section.
    /// - Complexity: As ``init(from:to:)``.
    @inlinable
    public init<S: DiffableSection>(
        from old: [S], to new: [S],
        isSectionEqual: (S, S) -> Bool, isItemEqual: (S.Item, S.Item) -> Bool
    ) {
        let sectionMatch = IdentifierMatch(
            oldCount: old.count, newCount: new.count,
            oldID: { old[$0].diffIdentifier }, newID: { new[$0].diffIdentifier }
        )
        let sections = Changeset(sectionMatch, isEqual: { isSectionEqual(old[$0], new[$1]) })
        let (oldItems, oldPaths) = Self.flattenSurviving(old, partners: sectionMatch.oldToNew)
        let (newItems, newPaths) = Self.flattenSurviving(new, partners: sectionMatch.newToOld)
        let itemMatch = IdentifierMatch(
            oldCount: oldItems.count, newCount: newItems.count,
            oldID: { oldItems[$0].diffIdentifier }, newID: { newItems[$0].diffIdentifier }
        )
        self.init(
            sections: sections, items: itemMatch, oldPaths: oldPaths, newPaths: newPaths,
            sectionPartners: sectionMatch.oldToNew, isEqual: { isItemEqual(oldItems[$0], newItems[$1]) }
        )
    }

    /// The items of the sections that have a partner (`partners[s] >= 0`), in order, with their paths.
    @inlinable
    static func flattenSurviving<S: DiffableSection>(_ sections: [S], partners: [Int]) -> ([S.Item], [ItemPath]) {
        var items: [S.Item] = []
        var paths: [ItemPath] = []
        for (sectionIndex, section) in sections.enumerated() where partners[sectionIndex] >= 0 {
            for (itemIndex, item) in section.items.enumerated() {
                items.append(item)
                paths.append(ItemPath(section: sectionIndex, item: itemIndex))
            }
        }
        return (items, paths)
    }

    /// Assembles the item changes from pairs of flattened items. `sectionPartners[s]` is the new index of
    /// old section `s`; `isEqual(i, j)` compares flattened old item `i` with flattened new item `j`.
    @usableFromInline
    init(
        sections: Changeset, items match: IdentifierMatch, oldPaths: [ItemPath], newPaths: [ItemPath],
        sectionPartners: [Int], isEqual: (Int, Int) -> Bool
    ) {
        self.init(sections: sections)
        // Pairs that stayed in their section take part in the longest-run search, section by section;
        // every other pair is a move.
        var sameSection = match.newToOld
        for (index, partner) in sameSection.enumerated()
        where partner >= 0 && sectionPartners[oldPaths[partner].section] != newPaths[index].section {
            sameSection[index] = -1
        }
        var stays = [Bool](repeating: false, count: newPaths.count)
        var start = 0
        sameSection.withUnsafeBufferPointer { sources in
            while start < newPaths.count {
                var end = start + 1
                while end < newPaths.count, newPaths[end].section == newPaths[start].section { end += 1 }
                let run = IdentifierMatch.stayingElements(among: UnsafeBufferPointer(rebasing: sources[start..<end]))
                for (offset, stay) in run.enumerated() { stays[start + offset] = stay }
                start = end
            }
        }
        for (index, partner) in match.oldToNew.enumerated() where partner < 0 {
            itemDeletes.append(oldPaths[index])
        }
        for (index, partner) in match.newToOld.enumerated() {
            if partner < 0 {
                itemInserts.append(newPaths[index])
            } else if !stays[index] {
                itemMoves.append(ItemMove(from: oldPaths[partner], to: newPaths[index]))
            } else if !isEqual(partner, index) {
                itemUpdates.append(oldPaths[partner])
            }
        }
        itemUpdates.sort()  // new order follows new sections, which may have moved
    }
}

extension SectionedChangeset: CustomStringConvertible {
    /// The non-empty lists, as in `SectionedChangeset(itemDeletes: [[0, 1]])`.
    public var description: String {
        describeNonEmpty("SectionedChangeset", [
            ("sections", sections.isEmpty, "\(sections)"),
            ("itemDeletes", itemDeletes.isEmpty, "\(itemDeletes)"),
            ("itemInserts", itemInserts.isEmpty, "\(itemInserts)"),
            ("itemMoves", itemMoves.isEmpty, "\(itemMoves)"),
            ("itemUpdates", itemUpdates.isEmpty, "\(itemUpdates)"),
        ])
    }
}

extension SectionedChangeset.ItemPath: CustomStringConvertible {
    /// `[section, item]`, as in `[0, 2]`.
    public var description: String { "[\(section), \(item)]" }
}

extension SectionedChangeset.ItemMove: CustomStringConvertible {
    /// `from -> to`, as in `[0, 1] -> [1, 0]`.
    public var description: String { "\(from) -> \(to)" }
}
