extension ObservableType {
    /// This stream followed by another: call it as `concat(_:)`.
    ///
    /// `a.concat(b)` sends the values of `a`, then, once it has completed, those of `b`. `b` is subscribed
    /// only after `a` has completed; an error of either ends the stream.
    ///
    /// ```swift
    /// let subscription = Observable.of(1, 2).concat(Observable.of(3)).observe { print($0) }
    /// // Prints "1", "2", "3"
    /// ```
    // A property with a callable value rather than a method `concat(_:)`: with a method of that base name,
    // Swift 6.3 cannot infer `Value` in `Observable.concat(a, b)` once `Observable` is `Sendable` only when
    // `Value` is (swiftlang/swift#80146). The call site reads the same.
    public var concat: Concatenating<Value> { Concatenating(asObservable()) }
}

/// The value of ``ObservableType/concat``: call it to follow the stream with another, as in
/// `a.concat(b)`.
public struct Concatenating<Value> {
    let base: Observable<Value>

    init(_ base: Observable<Value>) { self.base = base }

    /// Sends the values of the stream, then, once it has completed, those of `other`.
    public func callAsFunction(_ other: some ObservableType<Value>) -> Observable<Value> {
        Observable<Value>.concat([base, other.asObservable()])
    }
}

extension Observable {
    /// Sends the values of each of `sources` in turn: a source is subscribed only after the one before it
    /// has completed.
    ///
    /// Completes after the last source has completed (at once for no sources); an error of any source
    /// ends the stream, and the sources after it are never subscribed.
    ///
    /// ```swift
    /// let greeting = Observable.concat(Observable.of("hello"), Observable.of("world"))
    /// let subscription = greeting.observe { print($0) }
    /// // Prints "hello", "world"
    /// ```
    public static func concat(_ sources: any ObservableType<Value>...) -> Observable<Value> {
        concat(sources.map { $0.asObservable() })
    }

    /// Sends the values of each stream of `sources` in turn: a stream is subscribed only after the one
    /// before it has completed.
    ///
    /// The sequence is read lazily, one stream when the one before it has completed, so it may be long or
    /// endless. Completes after its last stream has completed (at once for an empty sequence); an error
    /// of any stream ends the stream, and the streams after it are never subscribed. Streams that
    /// complete while being subscribed are followed in a loop, so the stack does not grow with their
    /// number.
    ///
    /// ```swift
    /// let pages = (1...3).map { Observable.just("page \($0)") }
    /// let subscription = Observable.concat(pages).observe { print($0) }
    /// // Prints "page 1", "page 2", "page 3"
    /// ```
    public static func concat(_ sources: some Sequence<some ObservableType<Value>>) -> Observable<Value> {
        Observable.recipe { observer in
            var remaining = sources.makeIterator()
            let current = SubscriptionSlot()
            let route = WeakSerializer<Event<Value>>()
            let serializer = Serializer<Event<Value>> { event in
                switch event {
                case .next(let value):
                    observer.next(value)
                    return true
                case .error(let error):
                    observer.end(.failed(error))
                    return false
                case .completed:
                    guard let next = remaining.next() else {
                        observer.end(.completed)
                        return false
                    }
                    current.replace(with: nil)
                    current.replace(with: next.subscribe { route.submit($0) })
                    return true
                }
            }
            route.target = serializer
            let subscription = Subscription {
                current.cancel()
                serializer.cancel()
            }
            // Handed over before the first stream runs, so a subscriber that has had enough while
            // streams still complete at once (take) stops the loop: see `Observer.early`.
            observer.early?.replace(with: subscription)
            // The end of "no stream yet" subscribes the first.
            serializer.submit(.completed)
            return subscription
        }
    }
}
