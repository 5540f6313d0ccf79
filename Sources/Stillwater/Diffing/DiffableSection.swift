/// A section of a sectioned list: an identity and content of its own (a header, say), and a list of items.
///
/// ``SectionedChangeset`` diffs sections by their ``Diffable/diffIdentifier`` and items by theirs, across
/// all sections at once, so an item that moves to another section is a move, not a delete and an insert.
/// The section's *own* content is what `==` sees with its items set aside (or what the closure given to
/// ``SectionedChangeset/init(from:to:isSectionEqual:isItemEqual:)`` compares).
///
/// ``ListSection`` is a ready-made section for any model and item type.
public protocol DiffableSection: Diffable {
    /// The type of the section's items.
    associatedtype Item: Diffable

    /// The section's items, in order. Applying a changeset replaces them.
    var items: [Item] { get set }
}

/// A section made of a model (its identity and own content, a header title for instance) and items.
///
/// ```swift
/// let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
/// let new = [ListSection("Today", items: ["milk"]), ListSection("Later", items: ["eggs", "bread"])]
/// let changeset = SectionedChangeset(from: old, to: new)
/// print(changeset.itemMoves)
/// // Prints "[[0, 1] -> [1, 0]]"
/// ```
public struct ListSection<Model: Diffable, Item: Diffable>: DiffableSection {
    /// The section's identity and own content.
    public var model: Model
    /// The section's items, in order.
    public var items: [Item]

    /// A section with `model` and `items`.
    @inlinable
    public init(_ model: Model, items: [Item]) {
        self.model = model
        self.items = items
    }

    /// The model's identifier.
    @inlinable
    public var diffIdentifier: Model.DiffIdentifier { model.diffIdentifier }
}

extension ListSection: Equatable where Model: Equatable, Item: Equatable {}
extension ListSection: Hashable where Model: Hashable, Item: Hashable {}
extension ListSection: Sendable where Model: Sendable, Item: Sendable {}
