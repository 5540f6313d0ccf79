/// A subject that replays the last `bufferSize` values to each new observer, then sends every change.
///
/// ```swift
/// let log = ReplaySubject<String>(bufferSize: 2)
/// log.send("a")
/// log.send("b")
/// log.send("c")
/// let subscription = log.observe { print($0) }
/// // Prints "b", "c"
/// ```
///
/// After `complete()` or `fail(_:)`, sends are ignored, and a new subscriber receives the buffered values
/// and then the terminal event. Safe from any thread.
///
/// - Note: The buffer holds up to `bufferSize` values for as long as the subject lives; pass `Int.max`
///   to keep every value.
public final class ReplaySubject<Value>: ObservableType {
    @usableFromInline let core: SourceCore<Value>

    /// Creates a subject that replays the last `bufferSize` values.
    ///
    /// - Parameter bufferSize: How many values to keep; `0` behaves like a ``PublishSubject`` that still
    ///   replays its terminal event. Must not be negative.
    public init(bufferSize: Int) {
        precondition(
            bufferSize >= 0,
            "ReplaySubject(bufferSize:) needs a bufferSize of 0 or more, got \(bufferSize); pass 0 to replay nothing.")
        core = SourceCore(.lastValues(bufferSize))
    }

    /// Sends `value` to every observer and keeps it for later subscribers.
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

    /// Registers `observer`: it receives the buffered values first, then every later event.
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

extension ReplaySubject: Sendable where Value: Sendable {}
