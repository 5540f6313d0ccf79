/// A change of a list that carries its own content: the ``Changeset`` from the old list to the new one,
/// and the new content of every element the changeset names (each insert, each move target and each
/// update). A holder of the old list turns it into the new one with ``apply(to:)``, without the new list.
///
/// This is what a server sends a client that keeps a replica of a list: the changes, and only the
/// elements that changed or moved, instead of the whole list. It is `Codable` when its elements are
/// (see "JSON" below), and applying it checks everything it reads, so a patch from the network that does
/// not fit the list is a thrown ``ListPatchError``, never a crash, and leaves the list as it was.
///
/// ```swift
/// let old = ["milk", "eggs", "bread"]
/// let new = ["bread", "milk", "tea"]
/// let patch = ListPatch(from: old, to: new)
/// var replica = old
/// try patch.apply(to: &replica)
/// print(replica, patch.elements)
/// // Prints "[\"bread\", \"milk\", \"tea\"] [\"bread\", \"tea\"]"
/// ```
///
/// ## JSON
///
/// `{"changes": <changeset>, "elements": [...]}`, where the changeset is encoded as ``Changeset``
/// documents (for example `{"deletes":[1],"moves":[[2,0]],"inserts":[2]}`), and `elements` holds the new
/// content of the inserts, move targets and updated elements together, in ascending order of their index
/// in the new list. Decoding fails for an unknown key, or when the number of elements is not the number
/// the changeset names.
public struct ListPatch<Element> {
    /// The changes from the old list to the new one.
    public var changeset: Changeset
    /// The new content of every insert, move target and updated element, in ascending order of their
    /// index in the new list.
    public var elements: [Element]

    /// Creates a patch from a changeset and the content it names.
    ///
    /// - Precondition: `elements` has one element for each insert, move and update of `changeset`.
    public init(changeset: Changeset, elements: [Element]) {
        let named = changeset.inserts.count + changeset.moves.count + changeset.updates.count
        precondition(elements.count == named, """
            ListPatch(changeset:elements:): elements has \(elements.count) elements, the changeset names \(named) \
            (its inserts, moves and updates)
            """)
        self.changeset = changeset
        self.elements = elements
    }

    /// The patch that turns `old` into `new`: a ``Changeset`` with minimal moves, and the content of the
    /// elements it names, read from `new`.
    ///
    /// - Complexity: O(*n* + *m*) for lists of *n* and *m* elements, as ``Changeset/init(from:to:)``.
    public init(from old: [Element], to new: [Element]) where Element: Diffable & Equatable {
        let changeset = Changeset(from: old, to: new)
        let slots = changeset.slots(oldCount: old.count)
        var elements: [Element] = []
        elements.reserveCapacity(changeset.inserts.count + changeset.moves.count + changeset.updates.count)
        for (index, slot) in slots.enumerated() where slot.readsNew { elements.append(new[index]) }
        self.changeset = changeset
        self.elements = elements
    }

    /// Whether the patch changes nothing.
    public var isEmpty: Bool { changeset.isEmpty }

    /// The list this patch makes of `list`.
    ///
    /// - Throws: ``ListPatchError`` when the patch does not fit `list` (an index out of range, an index
    ///   with two roles, or too few or too many elements): it was made for another list.
    /// - Complexity: O(*n* + *m*).
    public func applied(to list: [Element]) throws(ListPatchError) -> [Element] {
        let slots = try ListSlot.checkedLayout(
            oldCount: list.count, leaving: changeset.deletes, arriving: changeset.inserts, moves: changeset.moves,
            updated: changeset.updates, what: "ListPatch")
        var next = elements.startIndex
        var result: [Element] = []
        result.reserveCapacity(slots.count)
        for slot in slots {
            if slot.readsNew {
                guard next < elements.endIndex else {
                    throw ListPatchError("ListPatch: \(elements.count) elements for a changeset that names more")
                }
                result.append(elements[next])
                next += 1
            } else {
                result.append(list[slot.old])
            }
        }
        guard next == elements.endIndex else {
            throw ListPatchError("ListPatch: \(elements.count) elements for a changeset that names \(next)")
        }
        return result
    }

    /// Turns `list` into the list this patch makes of it. When the patch does not fit, `list` is left as
    /// it was and the error is thrown.
    ///
    /// - Throws: ``ListPatchError``, as ``applied(to:)``.
    public func apply(to list: inout [Element]) throws(ListPatchError) {
        list = try applied(to: list)
    }
}

extension ListPatch: Equatable where Element: Equatable {}
extension ListPatch: Sendable where Element: Sendable {}

extension ListPatch: Codable where Element: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case changes, elements
    }

    /// Decodes the JSON shape in the type's documentation.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for an unknown key, an invalid changeset (see
    ///   ``Changeset``), or a number of elements other than the number the changeset names.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(in: decoder, known: CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let changeset = try container.decode(Changeset.self, forKey: .changes)
        let elements = try container.decodeIfPresent([Element].self, forKey: .elements) ?? []
        let named = changeset.inserts.count + changeset.moves.count + changeset.updates.count
        guard elements.count == named else {
            throw DecodingError.dataCorruptedError(
                forKey: .elements, in: container,
                debugDescription: "\(elements.count) elements, but the changeset names \(named) (its inserts, moves and updates)")
        }
        self.changeset = changeset
        self.elements = elements
    }

    /// Encodes the JSON shape in the type's documentation.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changeset, forKey: .changes)
        try container.encode(elements, forKey: .elements)
    }
}

/// Why a ``ListPatch`` (or a changeset read from outside) does not fit the list it is applied to.
public struct ListPatchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What does not fit, in words.
    public var message: String

    /// Creates an error with its explanation.
    public init(_ message: String) {
        self.message = message
    }

    /// The explanation.
    public var description: String { message }
}
