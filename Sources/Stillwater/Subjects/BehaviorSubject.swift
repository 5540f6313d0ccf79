/// A subject with a current value: a new observer receives the current value first, then every change.
///
/// ```swift
/// let temperature = BehaviorSubject(20)
/// let subscription = temperature.observe { print($0) }
/// temperature.send(21)
/// print(temperature.value)
/// // Prints "20", "21", "21"
/// ```
///
/// `value` always reads the latest sent value, even while that value's delivery waits behind another
/// one. After `complete()` or `fail(_:)`, sends are ignored (`value` keeps the last value) and a new
/// subscriber receives only the terminal event. Safe from any thread.
public final class BehaviorSubject<Value>: ObservableType {
    @usableFromInline let core: SourceCore<Value>

    /// Creates a subject whose current value is `initial`.
    public init(_ initial: Value) {
        core = SourceCore(.latestValue, current: initial)
    }

    /// The latest value sent (or the initial value).
    public var value: Value {
        core.currentValue
    }

    /// Makes `value` the current value and sends it to every observer.
    @inlinable
    public func send(_ value: Value) {
        core.send(.next(value))
    }

    /// Ends the stream: observers receive `completed`, and later sends are ignored.
    public func complete() {
        core.send(.completed)
    }

    /// Ends the stream with `error`: observers receive it, and later sends are ignored.
    public func fail(_ error: any Error) {
        core.send(.error(error))
    }

    /// Registers `observer`: it receives the current value first, then every later event.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        core.subscribe(observer)
    }

    /// This subject as an ``Observable`` that subscribes straight to it: operators built on it hand each
    /// value to their stage directly, with no event closure in between.
    @inlinable
    public func asObservable() -> Observable<Value> {
        core.observable
    }
}

extension BehaviorSubject: Sendable where Value: Sendable {}
