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
}

extension PropertyStorage {
    /// Registers `observer` for later changes only: the current value that a subscription delivers
    /// first is dropped.
    @usableFromInline
    func subscribeToChanges(_ observer: Observer<Value>) -> Subscription {
        let isFirst = OperatorState(true)
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

    /// The later changes only, as a stream (`changes` of `Property` and `MutableProperty`).
    /// This value as an ``Observable`` that subscribes straight to it (what a property's
    /// `asObservable()` returns).
    @usableFromInline
    var observable: Observable<Value> {
        Observable.attaching({ [self] observer in subscribe(observer) })
    }

    @usableFromInline
    var changes: Observable<Value> {
        Observable.attaching({ self.subscribeToChanges($0) })
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
final class RootStorage<Value>: MutablePropertyStorage, @unchecked Sendable {
    @usableFromInline let core: SourceCore<Value>
    @usableFromInline let scopes = ScopeCache()

    /// - Parameter writesWhileDelivering: `true` for a store's state, which is written only by the thread
    ///   running its delivery queue (see ``SourceCore/writesWhileDelivering``).
    @inlinable
    init(_ initial: Value, writesWhileDelivering: Bool = false) {
        core = SourceCore(replayLimit: 1, initial: [initial], writesWhileDelivering: writesWhileDelivering)
    }

    @inlinable
    var value: Value { core.currentValue }

    @inlinable
    var host: any DeliveryHost { core }

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
@usableFromInline
final class ConstantStorage<Value>: PropertyStorage, @unchecked Sendable {
    @usableFromInline let value: Value
    @usableFromInline let scopes = ScopeCache()
    /// A constant never delivers after subscribing; its scopes still need a deliverer for their own
    /// subscribers, so it has an idle one.
    @usableFromInline let host: any DeliveryHost = SourceCore<Void>(replayLimit: 0)

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        observer.next(value)
        return .empty
    }
}

/// A writable view of one part of a parent property (a lens): it reads and writes through the parent,
/// and its observers are told of the parent's changes through `observation`.
@usableFromInline
final class LensStorage<Root, Value>: MutablePropertyStorage, @unchecked Sendable {
    @usableFromInline let parent: any MutablePropertyStorage<Root>
    @usableFromInline let keyPath: WritableKeyPath<Root, Value>
    @usableFromInline let observation: any PropertyStorage<Value>
    @usableFromInline let scopes = ScopeCache()

    @usableFromInline
    init(
        parent: any MutablePropertyStorage<Root>, keyPath: WritableKeyPath<Root, Value>,
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
final class MappedStorage<Root, Value>: PropertyStorage, @unchecked Sendable {
    @usableFromInline let parent: any PropertyStorage<Root>
    @usableFromInline let keyPath: KeyPath<Root, Value>
    @usableFromInline let scopes = ScopeCache()

    @usableFromInline
    init(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) {
        self.parent = parent
        self.keyPath = keyPath
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: keyPath] }

    @usableFromInline
    var host: any DeliveryHost { parent.host }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let keyPath = self.keyPath
        let next = observer.next
        return parent.subscribe(Observer(next: { next($0[keyPath: keyPath]) }, end: observer.end))
    }
}
