/// The key of one value in a ``ComponentContext``: its type, its default, and how two of its values compare.
///
/// Declare a key as a type, and, for readable call sites, a property on `ComponentContext`:
///
/// ```swift
/// enum OnToggleKey: ContextKey {
///     static let defaultValue = ActionHandle<Int>()
/// }
/// extension ComponentContext {
///     var onToggle: ActionHandle<Int> {
///         get { self[OnToggleKey.self] }
///         set { self[OnToggleKey.self] = newValue }
///     }
/// }
/// ```
///
/// Comparing contexts compares their values key by key with ``isEqual(_:_:)``. When `Value` is
/// `Equatable` (numbers, strings, ``ActionHandle``s, structs of them) that is `==`. Any other value (a
/// closure, say) cannot be compared, so it counts as changed whenever it was set again, and as unchanged
/// only while the context carries the very entry it was set with.
public protocol ContextKey {
    /// The type of the value stored under this key.
    associatedtype Value: Sendable

    /// The value a context returns for this key when no ancestor set one.
    static var defaultValue: Value { get }

    /// Whether two values of this key are the same to a component that reads them.
    ///
    /// The default is `==` when `Value` is `Equatable`, and `false` otherwise. Implement it to compare by
    /// something else, such as the identity of an object.
    static func isEqual(_ lhs: Value, _ rhs: Value) -> Bool
}

extension ContextKey {
    /// Values that are not `Equatable` cannot be compared, so two of them always count as different.
    public static func isEqual(_ lhs: Value, _ rhs: Value) -> Bool {
        false
    }
}

extension ContextKey where Value: Equatable {
    /// Compares the two values with `==`.
    public static func isEqual(_ lhs: Value, _ rhs: Value) -> Bool {
        lhs == rhs
    }
}

/// A typed collection of shared values (action handles, a theme, a locale) that a tree of components
/// passes down, in the role SwiftUI's environment plays.
///
/// Each value is found by its ``ContextKey``; a key nobody set reads as its default. A context is a value:
/// a parent that sets a key in its copy overrides it for the subtree it passes that copy to, and its
/// siblings and ancestors keep what they had.
///
/// ```swift
/// enum AccentKey: ContextKey { static let defaultValue = "blue" }
///
/// let root = ComponentContext()
/// let warning = root.setting(AccentKey.self, to: "red")   // for one subtree
/// print(root[AccentKey.self], warning[AccentKey.self])
/// print(root == warning, warning == root.setting(AccentKey.self, to: "red"))
/// // Prints "blue red", "false true"
/// ```
///
/// Two contexts are equal when every key reads the same in both, compared with the key's
/// ``ContextKey/isEqual(_:_:)`` (a key set in one and not the other is compared with its default). So a
/// component whose inputs hold a context is skipped by a ``RenderGate`` when nothing in the context
/// changed, and ``hasSameValues(as:for:)`` narrows the comparison to the keys one component reads.
///
/// Handles make this comparison meaningful: a context rebuilt with the same handles compares equal, while a
/// context rebuilt with new closures does not, because closures cannot be compared.
///
/// - Complexity: Reading a key is a dictionary lookup; setting one copies the context's entries, O(n) for
///   n keys set. Comparing is O(1) when both contexts share their entries (a context passed down
///   unchanged), O(n) otherwise.
public struct ComponentContext: Equatable, Sendable, CustomStringConvertible {
    /// Immutable, so copies share it and comparing two copies starts with a cheap identity check.
    private final class Storage: Sendable {
        let entries: [ObjectIdentifier: any ContextEntry]

        init(_ entries: [ObjectIdentifier: any ContextEntry]) {
            self.entries = entries
        }
    }

    private var storage: Storage

    /// Creates a context in which every key reads as its default.
    public init() {
        storage = Storage([:])
    }

    /// The value stored under `key`, or its ``ContextKey/defaultValue`` when none was set; setting it
    /// stores a value in this copy only.
    public subscript<Key: ContextKey>(key: Key.Type) -> Key.Value {
        get {
            guard let entry = storage.entries[ObjectIdentifier(key)] else { return Key.defaultValue }
            return (entry as! Entry<Key>).value
        }
        set {
            var entries = storage.entries
            entries[ObjectIdentifier(key)] = Entry<Key>(newValue)
            storage = Storage(entries)
        }
    }

    /// A copy of this context with `key` set to `value`, to pass to a subtree.
    ///
    /// ```swift
    /// enum DepthKey: ContextKey { static let defaultValue = 0 }
    /// let nested = ComponentContext().setting(DepthKey.self, to: 1)
    /// print(nested[DepthKey.self])
    /// // Prints "1"
    /// ```
    public func setting<Key: ContextKey>(_ key: Key.Type, to value: Key.Value) -> ComponentContext {
        var copy = self
        copy[key] = value
        return copy
    }

    /// A copy of this context with the property at `keyPath` set to `value`, for keys that have a property
    /// on `ComponentContext`: `context.setting(\.onToggle, to: handle)`.
    public func setting<Value>(
        _ keyPath: WritableKeyPath<ComponentContext, Value>, to value: Value
    ) -> ComponentContext {
        var copy = self
        copy[keyPath: keyPath] = value
        return copy
    }

    /// A copy of this context in which `key` reads as its default again.
    public func removing<Key: ContextKey>(_ key: Key.Type) -> ComponentContext {
        guard storage.entries[ObjectIdentifier(key)] != nil else { return self }
        var entries = storage.entries
        entries[ObjectIdentifier(key)] = nil
        var copy = self
        copy.storage = Storage(entries)
        return copy
    }

    /// Whether a value was set for `key` (by this context or the one it was copied from), rather than read
    /// from the default.
    public func contains<Key: ContextKey>(_ key: Key.Type) -> Bool {
        storage.entries[ObjectIdentifier(key)] != nil
    }

    /// Whether `key` reads the same in this context and in `other`, compared with the key's
    /// ``ContextKey/isEqual(_:_:)``.
    public func hasSameValue<Key: ContextKey>(as other: ComponentContext, for key: Key.Type) -> Bool {
        matches(other, at: ObjectIdentifier(key))
    }

    /// Whether every one of `keys` reads the same in this context and in `other`: the question a component
    /// asks when it reads only those keys, so that changes to the others do not make it render.
    ///
    /// ```swift
    /// enum TitleKey: ContextKey { static let defaultValue = "" }
    /// enum ClockKey: ContextKey { static let defaultValue = 0 }
    /// let before = ComponentContext().setting(TitleKey.self, to: "Inbox")
    /// let after = before.setting(ClockKey.self, to: 1)
    /// print(after == before, after.hasSameValues(as: before, for: [TitleKey.self]))
    /// // Prints "false true"
    /// ```
    ///
    /// - Complexity: O(k) for k keys.
    public func hasSameValues(as other: ComponentContext, for keys: [any ContextKey.Type]) -> Bool {
        if storage === other.storage { return true }
        return keys.allSatisfy { matches(other, at: ObjectIdentifier($0)) }
    }

    /// Whether every key reads the same in both contexts, compared with each key's
    /// ``ContextKey/isEqual(_:_:)``; a key set in only one of them is compared with its default.
    public static func == (lhs: ComponentContext, rhs: ComponentContext) -> Bool {
        if lhs.storage === rhs.storage { return true }
        let (left, right) = (lhs.storage.entries, rhs.storage.entries)
        return left.keys.allSatisfy { lhs.matches(rhs, at: $0) }
            && right.keys.allSatisfy { left[$0] != nil || lhs.matches(rhs, at: $0) }
    }

    /// The names of the keys that were set, in alphabetical order: `ComponentContext(AccentKey, DepthKey)`.
    public var description: String {
        "ComponentContext(\(storage.entries.values.map(\.keyName).sorted().joined(separator: ", ")))"
    }

    /// Whether the key named by `id` reads the same here and in `other` (a missing entry reads its default).
    private func matches(_ other: ComponentContext, at id: ObjectIdentifier) -> Bool {
        switch (storage.entries[id], other.storage.entries[id]) {
        case (nil, nil): true
        case (let entry?, let otherEntry): entry.isEqual(to: otherEntry)
        case (nil, let otherEntry?): otherEntry.isEqual(to: nil)
        }
    }
}

/// One value stored in a ``ComponentContext``, with its key's comparison.
private protocol ContextEntry: AnyObject, Sendable {
    /// The key type's name, for descriptions.
    var keyName: String { get }
    /// Whether this entry reads the same as `other`, where `nil` stands for the key's default.
    func isEqual(to other: (any ContextEntry)?) -> Bool
}

private final class Entry<Key: ContextKey>: ContextEntry {
    let value: Key.Value

    init(_ value: Key.Value) {
        self.value = value
    }

    var keyName: String {
        String(describing: Key.self)
    }

    func isEqual(to other: (any ContextEntry)?) -> Bool {
        guard let other else { return Key.isEqual(value, Key.defaultValue) }
        // The same entry, handed down unchanged, reads the same even when its value cannot be compared.
        if other === self { return true }
        guard let other = other as? Entry<Key> else { return false }
        return Key.isEqual(value, other.value)
    }
}
