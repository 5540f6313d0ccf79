/// The difference between two versions of a list, as one batch update: deletes, inserts, moves and updates.
///
/// The indexes follow the rules of a batch update (the ones `UICollectionView.performBatchUpdates` and
/// its peers use), so a changeset can drive a list view, a terminal list, or a patch sent to a client:
///
/// - ``deletes`` and ``updates`` are indexes in the *old* list, ``inserts`` indexes in the *new* list, and
///   each ``moves`` element goes from an old index to a new one;
/// - an old index appears at most once among deletes, updates and the sources of moves, and a new index at
///   most once among inserts and the targets of moves;
/// - the elements in none of these lists (the *kept* ones) keep their relative order, and fill the new
///   indexes that are neither inserts nor move targets, in order.
///
/// ```swift
/// let old = ["a", "b", "c", "d"]
/// let new = ["d", "a", "c", "e"]
/// let changeset = Changeset(from: old, to: new)
/// print(changeset)
/// // Prints "Changeset(deletes: [1], inserts: [3], moves: [3 -> 0])"
/// ```
///
/// ``Swift/Array/applying(_:newElement:)`` turns the old list into the new one with it; a ``ListPatch``
/// carries a changeset together with the new content it names.
///
/// ## JSON
///
/// A changeset is `Codable`, as an object of up to four lists of indexes, with a move as `[from, to]`:
///
/// ```json
/// {"deletes": [1], "inserts": [3], "moves": [[3, 0]], "updates": [2]}
/// ```
///
/// An empty list is left out when encoding (an empty changeset is `{}`), and a missing key decodes as an
/// empty list. Decoding fails (`DecodingError.dataCorrupted`) for an unknown key, a list out of its
/// ascending order (moves go by ascending `to`), a negative index, or an index with two roles. Whether the indexes fit a particular list is checked when the changeset is applied
/// (``ListPatch/apply(to:)`` throws). This shape is stable: clients in other languages may rely on it.
public struct Changeset: Equatable, Sendable {
    /// An element that changed its position relative to the others: from its index in the old list to
    /// its index in the new one.
    public struct Move: Hashable, Sendable {
        /// The element's index in the old list.
        public let from: Int
        /// The element's index in the new list, where its new content is read.
        public let to: Int

        /// A move of the element at old index `from` to new index `to`.
        @inlinable
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Indexes in the old list of the elements that are gone, ascending.
    public var deletes: [Int]
    /// Indexes in the new list of the elements that are new, ascending.
    public var inserts: [Int]
    /// Elements whose position relative to the others changed, by ascending `to`. An element that moved
    /// and changed is reported here only; its new content is the one at `to`.
    public var moves: [Move]
    /// Indexes in the old list of the elements that kept their relative order but whose content changed,
    /// ascending.
    public var updates: [Int]

    /// Whether the two lists were equal: nothing deleted, inserted, moved or updated.
    @inlinable
    public var isEmpty: Bool { deletes.isEmpty && inserts.isEmpty && moves.isEmpty && updates.isEmpty }

    /// A changeset made of the given lists, as they are (a changeset received from elsewhere, or built
    /// by hand). ``Swift/Array/applying(_:newElement:)`` checks it against the list it is applied to.
    @inlinable
    public init(deletes: [Int] = [], inserts: [Int] = [], moves: [Move] = [], updates: [Int] = []) {
        self.deletes = deletes
        self.inserts = inserts
        self.moves = moves
        self.updates = updates
    }

    /// The changeset that turns `old` into `new`, comparing content with `==`.
    ///
    /// Elements are the same when their ``Diffable/diffIdentifier``s are equal; a kept element whose
    /// content differs (by `==`) is an update, or a move when its relative order changed too. Moves are as
    /// few as possible: the kept elements of a longest run whose old order held stay, every other kept
    /// element moves.
    ///
    /// ```swift
    /// struct Row: Diffable, Equatable { var id: String; var count: Int; var diffIdentifier: String { id } }
    /// let old = [Row(id: "a", count: 1), Row(id: "b", count: 1)]
    /// let new = [Row(id: "b", count: 1), Row(id: "a", count: 2)]
    /// print(Changeset(from: old, to: new))
    /// // Prints "Changeset(moves: [1 -> 0], updates: [0])"
    /// ```
    ///
    /// - Note: Duplicate identifiers are allowed and give a valid changeset, though perhaps not the
    ///   smallest. Occurrences of a repeated identifier are paired by neighbourhood first (an occurrence
    ///   next to a paired element pairs with the occurrence next to its partner), then in order (the k-th
    ///   still unpaired in `old` with the k-th still unpaired in `new`); occurrences left over are
    ///   deleted or inserted.
    /// - Complexity: O(*n* + *m*) hashing of identifiers (each identifier is hashed once when identifiers are distinct) and O(*n* + *m*)
    ///   other work when the order mostly held; at worst O(*m* log *m*) to find the fewest moves.
    @inlinable
    public init<C: Collection>(from old: C, to new: C) where C.Element: Diffable & Equatable {
        self.init(from: old, to: new, isEqual: ==)
    }

    /// The changeset that turns `old` into `new`, comparing content with `isEqual`.
    ///
    /// The same as ``init(from:to:)``, for elements that are not `Equatable` or whose content is compared
    /// another way. `isEqual` is called only for kept elements that stay in place (moved elements are
    /// reported as moves whether or not they changed).
    ///
    /// ```swift
    /// let changeset = Changeset(from: ["a", "b"], to: ["b", "a"], isEqual: { _, _ in true })
    /// print(changeset.moves)
    /// // Prints "[1 -> 0]"
    /// ```
    ///
    /// - Parameters:
    ///   - old: The list before the change.
    ///   - new: The list after the change.
    ///   - isEqual: Returns `true` when an old element and its new version have the same content.
    /// - Complexity: As ``init(from:to:)``.
    @inlinable
    public init<C: Collection>(
        from old: C, to new: C, isEqual: (C.Element, C.Element) -> Bool
    ) where C.Element: Diffable {
        let oldElements = Array(old), newElements = Array(new)
        self = oldElements.withUnsafeBufferPointer { old in
            newElements.withUnsafeBufferPointer { new in
                let match = IdentifierMatch(
                    oldCount: old.count, newCount: new.count,
                    oldID: { old[$0].diffIdentifier }, newID: { new[$0].diffIdentifier }
                )
                return Changeset(match, isEqual: { isEqual(old[$0], new[$1]) })
            }
        }
    }

    /// The changeset that pairs elements as `match` says, with the fewest moves. `isEqual(i, j)` says
    /// whether old element `i` and new element `j` (a pair that stays) have the same content.
    @inlinable
    init(_ match: IdentifierMatch, isEqual: (Int, Int) -> Bool) {
        self.init()
        let stays = match.stayingElements()
        for (index, partner) in match.oldToNew.enumerated() where partner < 0 {
            deletes.append(index)
        }
        for (index, partner) in match.newToOld.enumerated() {
            if partner < 0 {
                inserts.append(index)
            } else if !stays[index] {
                moves.append(Move(from: partner, to: index))
            } else if !isEqual(partner, index) {
                updates.append(partner)  // ascending: staying elements keep the old order
            }
        }
    }
}

extension Changeset: CustomStringConvertible {
    /// The non-empty lists, as in `Changeset(deletes: [1], moves: [3 -> 0])`; `Changeset()` when empty.
    public var description: String {
        describeNonEmpty("Changeset", [
            ("deletes", deletes.isEmpty, "\(deletes)"), ("inserts", inserts.isEmpty, "\(inserts)"),
            ("moves", moves.isEmpty, "\(moves)"), ("updates", updates.isEmpty, "\(updates)"),
        ])
    }
}

/// `name(label: text, …)` listing only the fields that are not empty.
func describeNonEmpty(_ name: String, _ fields: [(label: String, isEmpty: Bool, text: String)]) -> String {
    "\(name)(\(fields.filter { !$0.isEmpty }.map { "\($0.label): \($0.text)" }.joined(separator: ", ")))"
}

extension Changeset.Move: CustomStringConvertible {
    /// `from -> to`, as in `3 -> 0`.
    public var description: String { "\(from) -> \(to)" }
}
