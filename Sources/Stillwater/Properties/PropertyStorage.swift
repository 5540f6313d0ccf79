/// What a ``Property`` reads and observes: a root value, a constant, a scope node or a lens.
@usableFromInline
protocol PropertyStorage<Value>: AnyObject, Sendable {
    associatedtype Value

    /// The current value, read fresh.
    var value: Value { get }

    /// Registers `observer` for the current value first, then every change.
    func subscribe(_ observer: Observer<Value>) -> Subscription

    /// The scope nodes of this storage, shared by key path.
    var scopes: ScopeCache { get }

    /// The deliverer that runs this value's deliveries (the root source's); scopes run on it too.
    var host: any DeliveryHost { get }

    /// This value as a cell of its root's derivation graph (see ``DerivedCell``), shared: made on first
    /// use, then handed back while it lives.
    var derivation: DerivedCell<Value> { get }
}

/// The key under which a root keeps its derivation graph in its scope cache: a key path no user can
/// write, so it never meets a scope's.
@usableFromInline
struct DerivationGraphKey {
    @inlinable static var keyPath: AnyKeyPath { \DerivationGraphKey.self }
}

extension PropertyStorage {
    /// The root cell of a storage that is a root (a root value, a constant, a combination of several
    /// roots). Its graph is shared: kept weakly in the root's scope cache, and alive while any cell of it
    /// is, so every derived property of one root is in one graph.
    @usableFromInline
    var rootDerivation: DerivedCell<Value> {
        let graph = scopes.node(for: DerivationGraphKey.keyPath) { DerivationGraph(root: self) }
        return DerivedCell.root(in: graph)
    }

    /// The cell of a storage that reads `keyPath` of its parent, kept in its own scope cache.
    @usableFromInline
    func derivation<Parent>(reading keyPath: KeyPath<Parent, Value>, of parent: any PropertyStorage<Parent>)
        -> DerivedCell<Value>
    {
        scopes.node(for: DerivationGraphKey.keyPath) { parent.derivation.mapped { $0[keyPath: keyPath] } }
    }
}

extension PropertyStorage where Value: Equatable {
    /// The cell of a scope that reads `keyPath` of its parent, deduplicated, kept in its own scope cache.
    @usableFromInline
    func derivation<Parent>(
        deduplicating keyPath: KeyPath<Parent, Value>, of parent: any PropertyStorage<Parent>
    ) -> DerivedCell<Value> {
        scopes.node(for: DerivationGraphKey.keyPath) {
            parent.derivation.mapped(deduplicating: { $0[keyPath: keyPath] })
        }
    }
}

extension PropertyStorage {
    /// Registers `observer` for later changes only: the current value that a subscription delivers
    /// first is dropped.
    @usableFromInline
    func subscribeToChanges(_ observer: Observer<Value>) -> Subscription {
        let isFirst = DelivererBox(true)
        let next = observer.next
        return subscribe(Observer(
            next: { value in
                if isFirst.value {
                    isFirst.value = false
                    return
                }
                next(value)
            },
            end: observer.end
        ))
    }

    /// This value as an ``Observable`` that subscribes straight to it (what a property's
    /// `asObservable()` returns).
    @usableFromInline
    var observable: Observable<Value> {
        Observable.recipe({ [self] observer in subscribe(observer) })
    }

    /// The later changes only, as a stream (`changes` of `Property` and `MutableProperty`).
    @usableFromInline
    var changes: Observable<Value> {
        Observable.recipe({ self.subscribeToChanges($0) })
    }

}

/// What a ``MutableProperty`` reads, observes and writes: a root value or a lens into a parent.
@usableFromInline
protocol MutablePropertyStorage<Value>: PropertyStorage {
    /// Stores `newValue` and notifies observers (its delivery waits its turn when one is in progress).
    func set(_ newValue: Value)

    /// Changes the value in place, atomically with respect to other writes, and notifies observers.
    func modify<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result
}

/// A root property: the value and its observers live in a ``SourceCore`` that replays the current value.
@usableFromInline
final class RootStorage<Value>: MutablePropertyStorage, Sendable {
    @usableFromInline let core: SourceCore<Value>
    @usableFromInline let scopes = ScopeCache()

    /// - Parameter policy: ``ReplayPolicy/latestValue`` for a property, ``ReplayPolicy/storeState`` for a
    ///   store's state, which only the thread running its delivery queue writes.
    @inlinable
    init(_ initial: Value, policy: ReplayPolicy = .latestValue) {
        core = SourceCore(policy, current: initial)
    }

    @inlinable
    var value: Value { core.currentValue }

    @inlinable
    var host: any DeliveryHost { core }

    @usableFromInline
    var derivation: DerivedCell<Value> { rootDerivation }

    @inlinable
    func set(_ newValue: Value) {
        core.send(.next(newValue))
    }

    @inlinable
    func modify<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try core.modifyCurrent(body)
    }

    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        core.subscribe(observer)
    }
}

/// A property that never changes: it sends its value to each subscriber, and nothing more.
///
/// The value need not be `Sendable` (the `Property` that exposes it is `Sendable` only when `Value` is):
/// it is handed in `sending` and kept under a lock, so the compiler checks that the caller keeps no
/// reference to it; a read takes the lock once.
@usableFromInline
final class ConstantStorage<Value>: PropertyStorage, Sendable {
    @usableFromInline let constant: Lock<Value>
    @usableFromInline let scopes = ScopeCache()
    /// A constant never delivers after subscribing; its scopes still need a deliverer for their own
    /// subscribers, so it has an idle one.
    @usableFromInline let host: any DeliveryHost = SourceCore<Void>(.none)

    @usableFromInline
    init(_ value: sending Value) {
        constant = Lock(value)
    }

    @usableFromInline
    var value: Value { constant.withLock { $0 } }

    @usableFromInline
    var derivation: DerivedCell<Value> { rootDerivation }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        observer.next(value)
        return .empty
    }
}

/// A writable view of one part of a parent property (a lens): it reads and writes through the parent,
/// and its observers are told of the parent's changes through `observation`.
@usableFromInline
final class LensStorage<Root, Value>: MutablePropertyStorage, Sendable {
    @usableFromInline let parent: any MutablePropertyStorage<Root>
    @usableFromInline let keyPath: WritableKeyPath<Root, Value> & Sendable
    @usableFromInline let observation: any PropertyStorage<Value>
    @usableFromInline let scopes = ScopeCache()

    @usableFromInline
    init(
        parent: any MutablePropertyStorage<Root>, keyPath: WritableKeyPath<Root, Value> & Sendable,
        observation: any PropertyStorage<Value>
    ) {
        self.parent = parent
        self.keyPath = keyPath
        self.observation = observation
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: keyPath] }

    @usableFromInline
    var host: any DeliveryHost { observation.host }

    @usableFromInline
    var derivation: DerivedCell<Value> { observation.derivation }

    @usableFromInline
    func set(_ newValue: Value) {
        let keyPath = self.keyPath
        parent.modify { $0[keyPath: keyPath] = newValue }
    }

    @usableFromInline
    func modify<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let keyPath = self.keyPath
        return try parent.modify { try body(&$0[keyPath: keyPath]) }
    }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        observation.subscribe(observer)
    }
}

/// Observation of a slice that is not `Equatable`: every parent change is passed on.
@usableFromInline
final class MappedStorage<Root, Value>: PropertyStorage, Sendable {
    @usableFromInline let parent: any PropertyStorage<Root>
    @usableFromInline let keyPath: KeyPath<Root, Value> & Sendable
    @usableFromInline let scopes = ScopeCache()

    @usableFromInline
    init(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value> & Sendable) {
        self.parent = parent
        self.keyPath = keyPath
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: keyPath] }

    @usableFromInline
    var host: any DeliveryHost { parent.host }

    @usableFromInline
    var derivation: DerivedCell<Value> { derivation(reading: keyPath, of: parent) }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let keyPath = self.keyPath
        let next = observer.next
        return parent.subscribe(Observer(next: { next($0[keyPath: keyPath]) }, end: observer.end))
    }
}
