/// A current value that never ends: a new observer receives the current value first, then every change.
///
/// ```swift
/// let title = BehaviorRelay("Inbox")
/// let subscription = title.observe { print($0) }
/// title.accept("Inbox (1)")
/// // Prints "Inbox", "Inbox (1)"
/// ```
///
/// `value` always reads the latest accepted value, even while its delivery waits behind another one.
/// Safe from any thread.
public final class BehaviorRelay<Value>: ObservableType {
    @usableFromInline let core: SourceCore<Value>

    /// Creates a relay whose current value is `initial`.
    public init(_ initial: Value) {
        core = SourceCore(.latestValue, current: initial)
    }

    /// The latest accepted value (or the initial value).
    public var value: Value {
        core.currentValue
    }

    /// Makes `value` the current value and sends it to every observer.
    @inlinable
    public func accept(_ value: Value) {
        core.send(.next(value))
    }

    /// Registers `observer`: it receives the current value first, then every later value. It never
    /// receives a terminal event.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        core.subscribe(observer)
    }

    /// This relay as an ``Observable`` that subscribes straight to it: operators built on it hand each
    /// value to their stage directly, with no event closure in between.
    @inlinable
    public func asObservable() -> Observable<Value> {
        core.observable
    }
}

extension BehaviorRelay: Sendable where Value: Sendable {}
