/// A value that changes over time and that you can write: set ``value``, or change it in place with
/// ``modify(_:)``, and every observer is told.
///
/// Subscribing delivers the current value first, then every change. Setting `value` notifies even when
/// the new value equals the old one; use ``scope(_:)`` or `distinctUntilChanged()` to see only real
/// changes.
///
/// ```swift
/// let name = MutableProperty("Ada")
/// let subscription = name.observe { print($0) }
/// name.value = "Grace"
/// // Prints "Ada", "Grace"
/// ```
///
/// Writes are safe from any thread at once. A write made while a delivery is in progress (from another
/// thread, or from inside an observer) stores the new value at once (`value` reads it) and its delivery
/// waits its turn, so observers see every value, in order, one at a time.
public final class MutableProperty<Value>: ObservableType {
    @usableFromInline let storage: any MutablePropertyStorage<Value>

    @usableFromInline
    init(storage: any MutablePropertyStorage<Value>) {
        self.storage = storage
    }

    /// Creates a property holding `initial`.
    public convenience init(_ initial: Value) {
        self.init(storage: RootStorage(initial))
    }

    /// The current value. Setting it stores the new value and notifies every observer.
    ///
    /// A compound write such as `property.value.count += 1` is a read followed by a write; when other
    /// threads write too, use ``modify(_:)``, which does both atomically.
    @inlinable
    public var value: Value {
        get { storage.value }
        set { storage.set(newValue) }
    }

    /// Changes the value in place, atomically with respect to every other write, then notifies observers
    /// of the result.
    ///
    /// ```swift
    /// import Dispatch
    ///
    /// let hits = MutableProperty(0)
    /// DispatchQueue.concurrentPerform(iterations: 1000) { _ in hits.modify { $0 += 1 } }
    /// print(hits.value)
    /// // Prints "1000"
    /// ```
    ///
    /// - Important: `body` runs while the property is locked: it must not read or write this property
    ///   (or a binding, scope or derived property of it). If it does, the program stops with a message
    ///   that says so ("a MutableProperty's modify body read or wrote the same property…"); change the
    ///   value only through the body's `inout` argument. Observers are called after the lock is
    ///   released, so they may read and write freely.
    @discardableResult
    public func modify<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.modify(body)
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

extension MutableProperty: Sendable where Value: Sendable {}

extension MutableProperty {
    /// A read-only property of one `Equatable` part of this value, notified only when that part changed.
    ///
    /// The same as `Property(self).scope(keyPath)`: scopes of one key path share one node.
    @inlinable
    public func scope<Sub: Equatable>(_ keyPath: KeyPath<Value, Sub>) -> Property<Sub> {
        Property<Sub>(storage: ScopeStorage.shared(parent: storage, keyPath: keyPath))
    }

    /// A writable property of one part of this value (a lens): it reads and writes through this property.
    ///
    /// Writing the binding changes this property and notifies its observers. The binding's own observers
    /// are notified only when their part changed.
    ///
    /// ```swift
    /// struct Profile { var name = ""; var age = 0 }
    /// let profile = MutableProperty(Profile())
    /// let name = profile.binding(\.name)
    /// let subscription = profile.observe { print($0.name) }
    /// name.value = "Ada"
    /// print(profile.value.name)
    /// // Prints "", "Ada", "Ada"
    /// ```
    public func binding<Sub: Equatable>(_ keyPath: WritableKeyPath<Value, Sub> & Sendable) -> MutableProperty<Sub> {
        MutableProperty<Sub>(storage: LensStorage(
            parent: storage, keyPath: keyPath, observation: ScopeStorage.shared(parent: storage, keyPath: keyPath)))
    }

    /// A writable property of one part of this value (a lens) whose type is not `Equatable`: its
    /// observers are notified on every change of this property.
    @_disfavoredOverload
    public func binding<Sub>(_ keyPath: WritableKeyPath<Value, Sub> & Sendable) -> MutableProperty<Sub> {
        MutableProperty<Sub>(storage: LensStorage(
            parent: storage, keyPath: keyPath, observation: MappedStorage(parent: storage, keyPath: keyPath)))
    }
}
