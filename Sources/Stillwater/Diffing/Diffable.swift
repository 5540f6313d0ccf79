/// A value that keeps an identity across versions of a list, so a diff can tell a changed element from a
/// replaced one.
///
/// Two elements with the same ``diffIdentifier`` are *the same element*: if their content differs, a diff
/// reports an update (or a move), never a delete plus an insert. Content is compared separately, with `==`
/// or with the closure given to ``Changeset/init(from:to:isEqual:)``.
///
/// ```swift
/// struct Todo: Diffable, Equatable {
///     let id: Int
///     var title: String
///     var diffIdentifier: Int { id }
/// }
/// let changeset = Changeset(from: [Todo(id: 1, title: "Milk")], to: [Todo(id: 1, title: "Oat milk")])
/// print(changeset)
/// // Prints "Changeset(updates: [0])"
/// ```
///
/// A type that is `Identifiable` gets `diffIdentifier` from its `id`; `String`, `Substring`, `Character`
/// and `Int` identify themselves (so lists of them never report updates, only deletes, inserts and moves).
public protocol Diffable {
    /// The type of the identity.
    associatedtype DiffIdentifier: Hashable

    /// The identity of this element: equal in two versions of a list when they are the same element.
    var diffIdentifier: DiffIdentifier { get }
}

extension Diffable where Self: Identifiable {
    /// The element's `id`.
    @inlinable
    public var diffIdentifier: ID { id }
}

extension String: Diffable {
    /// The string itself: a changed string is a different element.
    @inlinable
    public var diffIdentifier: String { self }
}

extension Substring: Diffable {
    /// The substring itself: a changed substring is a different element.
    @inlinable
    public var diffIdentifier: Substring { self }
}

extension Character: Diffable {
    /// The character itself.
    @inlinable
    public var diffIdentifier: Character { self }
}

extension Int: Diffable {
    /// The number itself.
    @inlinable
    public var diffIdentifier: Int { self }
}
