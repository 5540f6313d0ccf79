/// A read-only value that changes over time: read it with ``value``, observe it like any stream.
///
/// Subscribing delivers the current value first, then every change; ``changes`` delivers only later
/// changes. A property is a constant (``init(value:)``), a read-only view of a ``MutableProperty``
/// (``init(_:)``), or a scope of another property (``scope(_:)``).
///
/// ```swift
/// let counter = MutableProperty(0)
/// let readOnly = Property(counter)
/// let subscription = readOnly.observe { print($0) }
/// counter.value = 1
/// // Prints "0", "1"
/// ```
public final class Property<Value>: ObservableType {
    @usableFromInline let storage: any PropertyStorage<Value>

    @usableFromInline
    init(storage: any PropertyStorage<Value>) {
        self.storage = storage
    }

    /// A property that always holds `value`: subscribers receive it once, and nothing more.
    public convenience init(value: sending Value) {
        self.init(storage: ConstantStorage(value))
    }

    /// A read-only view of `mutable`: it reads, observes and scopes the same value, but cannot write it.
    public convenience init(_ mutable: MutableProperty<Value>) {
        self.init(storage: mutable.storage)
    }

    /// The current value.
    @inlinable
    public var value: Value {
        storage.value
    }

    /// The later changes only, without the current value.
    public var changes: Observable<Value> {
        storage.changes
    }

    /// Registers `observer` for the current value first, then every change.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        storage.subscribe(Observer(observer))
    }

    /// This property as an ``Observable`` that subscribes straight to it: operators built on it hand
    /// each value to their stage directly, with no event closure in between.
    @inlinable
    public func asObservable() -> Observable<Value> {
        storage.observable
    }
}

extension Property: Sendable where Value: Sendable {}

extension Property {
    /// A read-only property of one `Equatable` part of this value, whose observers are notified only when
    /// that part changed.
    ///
    /// Scopes of the same key path on the same property share one node: a thousand observers of
    /// `scope(\.count)` cost one read of `count` and one comparison per change, and `scope(\.count)` hands
    /// back a property over that same node each time. The node is freed when no property or
    /// subscription uses it.
    ///
    /// ```swift
    /// struct Screen { var title = "Inbox"; var unread = 0 }
    /// let screen = MutableProperty(Screen())
    /// let subscription = Property(screen).scope(\.title).observe { print($0) }
    /// screen.value.unread = 3        // title unchanged: nothing printed
    /// screen.value.title = "Archive"
    /// // Prints "Inbox", "Archive"
    /// ```
    ///
    /// - Complexity: Per parent change, one key-path read and one comparison, then one call per observer
    ///   of the scope when the part changed.
    @inlinable
    public func scope<Sub: Equatable>(_ keyPath: KeyPath<Value, Sub>) -> Property<Sub> {
        Property<Sub>(storage: ScopeStorage.shared(parent: storage, keyPath: keyPath))
    }
}
