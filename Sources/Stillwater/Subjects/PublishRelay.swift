/// A stream that never ends: you `accept` values into it, and each observer receives what arrives after
/// it subscribed.
///
/// A relay is a ``PublishSubject`` without `complete()` or `fail(_:)`, for UI and view-model events that
/// must not be ended by accident (a failed network call cannot kill a button's stream).
///
/// ```swift
/// let taps = PublishRelay<Void>()
/// let subscription = taps.observe { print("tap") }
/// taps.accept(())
/// // Prints "tap"
/// ```
///
/// Safe from any thread; reentrant accepts are queued like a subject's sends.
public final class PublishRelay<Value>: ObservableType {
    @usableFromInline let core = SourceCore<Value>(.none)

    /// Creates a relay with no observers.
    public init() {}

    /// Sends `value` to every current observer.
    @inlinable
    public func accept(_ value: Value) {
        core.send(.next(value))
    }

    /// Registers `observer` for the values accepted from now on. It never receives a terminal event.
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

extension PublishRelay: Sendable where Value: Sendable {}
