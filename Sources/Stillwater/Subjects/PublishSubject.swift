/// A stream you send values into by hand; each observer receives what is sent after it subscribed.
///
/// ```swift
/// let subject = PublishSubject<String>()
/// let subscription = subject.observe { print($0) }
/// subject.send("a")
/// subject.complete()
/// subject.send("b")   // ignored: the subject has completed
/// // Prints "a"
/// ```
///
/// `send(_:)`, `complete()` and `fail(_:)` are safe from any thread at once. A send made while another
/// delivery is in progress (from another thread, or from inside an observer) is queued and delivered after
/// the current event has reached every observer. After `complete()` or `fail(_:)`, sends are ignored and a
/// new subscriber receives only the terminal event.
///
/// - Complexity: A send costs one compare-and-swap to start delivering and one to finish, plus one call
///   per observer; it allocates nothing.
public final class PublishSubject<Value>: ObservableType {
    @usableFromInline let core = SourceCore<Value>(.none)

    /// Creates a subject with no observers.
    public init() {}

    /// Sends `value` to every current observer.
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

    /// Registers `observer` for the values sent from now on.
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

extension PublishSubject: Sendable where Value: Sendable {}
