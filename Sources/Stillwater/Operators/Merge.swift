extension ObservableType {
    /// The merge of this stream with another: call it as `merge(with:)`.
    ///
    /// `a.merge(with: b)` sends the values of both streams as they arrive; it completes when both have
    /// completed and fails as soon as either fails. It is `Observable.merge(a, b)`.
    ///
    /// ```swift
    /// let a = PublishSubject<String>()
    /// let b = PublishSubject<String>()
    /// let subscription = a.merge(with: b).observe { print($0) }
    /// a.send("a1")
    /// b.send("b1")
    /// // Prints "a1", "b1"
    /// ```
    // A property with a callable value rather than a method `merge(with:)`: with a method of that base
    // name, Swift 6.3 cannot infer `Value` in `Observable.merge(a, b)` once `Observable` is `Sendable` only
    // when `Value` is (swiftlang/swift#80146). The call site reads the same.
    public var merge: Merging<Value> { Merging(asObservable()) }
}

/// The value of ``ObservableType/merge``: call it to merge the stream with another, as in
/// `a.merge(with: b)`.
public struct Merging<Value> {
    let base: Observable<Value>

    init(_ base: Observable<Value>) { self.base = base }

    /// Sends the values of the stream and of `other` as they arrive; completes when both have completed,
    /// fails as soon as either fails.
    public func callAsFunction(with other: some ObservableType<Value>) -> Observable<Value> {
        Observable<Value>.merge([base, other.asObservable()])
    }
}

extension Observable {
    /// Sends the values of all `sources` as they arrive; completes when all have completed, fails as soon
    /// as one fails (and cancels the others).
    ///
    /// Events from sources on different threads are delivered one at a time, never at once.
    public static func merge(_ sources: any ObservableType<Value>...) -> Observable<Value> {
        merge(sources)
    }

    /// Sends the values of all `sources` as they arrive; completes when all have completed (at once for no
    /// sources), fails as soon as one fails (and cancels the others).
    public static func merge(_ sources: [any ObservableType<Value>]) -> Observable<Value> {
        if sources.isEmpty { return .empty() }
        return Observable { observer in
            let upstream = sources.map { _ in SubscriptionSlot() }
            var remaining = sources.count
            let serializer = Serializer<Event<Value>> { event in
                switch event {
                case .next:
                    observer(event)
                    return true
                case .completed:
                    remaining -= 1
                    guard remaining == 0 else { return true }
                    observer(.completed)
                    return false
                case .error:
                    observer(event)
                    for slot in upstream { slot.cancel() }
                    return false
                }
            }
            for (source, slot) in Swift.zip(sources, upstream) {
                slot.replace(with: source.subscribe { serializer.submit($0) })
            }
            return Subscription {
                for slot in upstream { slot.cancel() }
                serializer.cancel()
            }
        }
    }
}
