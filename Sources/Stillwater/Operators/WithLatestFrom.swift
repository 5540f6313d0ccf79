extension ObservableType {
    /// Sends, for each value of this stream, the latest value `other` has sent; nothing for the values
    /// that come before `other`'s first.
    ///
    /// ```swift
    /// let taps = PublishSubject<Void>()
    /// let text = BehaviorSubject("draft")
    /// let subscription = taps.withLatestFrom(text).observe { print($0) }
    /// taps.send(())
    /// text.send("final")
    /// text.send("final 2")
    /// taps.send(())
    /// // Prints "draft", "final 2"
    /// ```
    ///
    /// The same as ``withLatestFrom(_:resultSelector:)`` with a selector that keeps `other`'s value;
    /// it ends as that operator does.
    @inlinable
    public func withLatestFrom<Other: ObservableType>(_ other: Other) -> Observable<Other.Value> {
        withLatestFrom(other) { $1 }
    }

    /// Sends, for each value of this stream, `resultSelector` of that value and the latest value `other`
    /// has sent; nothing for the values that come before `other`'s first.
    ///
    /// ```swift
    /// let taps = PublishSubject<Int>()
    /// let name = PublishSubject<String>()
    /// let subscription = taps.withLatestFrom(name) { tap, name in "\(name) \(tap)" }
    ///     .observe { print($0) }
    /// taps.send(1)
    /// name.send("Ada")
    /// taps.send(2)
    /// taps.send(3)
    /// // Prints "Ada 2", "Ada 3"
    /// ```
    ///
    /// It follows RxSwift's `withLatestFrom`:
    /// - `other` is subscribed first, so a stream that replays (a ``BehaviorSubject``, a property)
    ///   gives its current value before this stream's first value is read.
    /// - Only this stream's values send: a value of `other` only becomes the latest.
    /// - This stream's completion completes the result. `other`'s completion does not end it: its last
    ///   value stays the latest for every later value of this stream. Either stream's failure fails it.
    ///   The end cancels both subscriptions.
    /// - Events from both streams reach the observer one at a time, on whichever thread sends them,
    ///   and an event sent from inside the observer is delivered after the current one.
    ///
    /// - Complexity: `resultSelector` runs once per value of this stream sent on; `other`'s latest
    ///   value is kept, nothing else. No allocation per value.
    @inlinable
    public func withLatestFrom<Other: ObservableType, Result>(
        _ other: Other,
        resultSelector: @escaping (Value, Other.Value) -> Result
    ) -> Observable<Result> {
        Observable<Result>.twoInputs(self, other, secondaryFirst: true) { observer, stop in
            let latest = LatestValue<Other.Value>()
            return { event in
                switch event {
                case .primary(.next(let value)):
                    if let other = latest.value { observer.next(resultSelector(value, other)) }
                    return true
                case .secondary(.next(let value)):
                    latest.value = value
                    return true
                case .secondary(.completed):
                    return true
                case .primary(.completed):
                    observer.end(.completed)
                    stop()
                    return false
                case .primary(.error(let error)), .secondary(.error(let error)):
                    observer.end(.failed(error))
                    stop()
                    return false
                }
            }
        }
    }
}

/// The latest value of `withLatestFrom`'s other stream. A class rather than a captured `var`, so that
/// reading it costs no exclusivity check: only the operator's serializer touches it.
@usableFromInline
final class LatestValue<Value> {
    @usableFromInline @exclusivity(unchecked) var value: Value?

    @inlinable init() {}
}
