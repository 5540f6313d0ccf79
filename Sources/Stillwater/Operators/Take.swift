extension ObservableType {
    /// Sends the first `count` values, then completes and cancels its subscription to the stream.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.take(2).subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// for value in 1...5 { subject.send(value) }
    /// // Prints "1", "2", "done"
    /// ```
    ///
    /// A stream that sends while it is being subscribed (``Observable/from(_:)-(S)`` over a sequence,
    /// ``Observable/create(_:)``) stops producing once `count` values have passed, so
    /// `Observable.from(sequence(first: 1) { $0 + 1 }).take(3)` returns after three values. That holds through
    /// `map`, `filter`, `compactMap`, `scan`, `distinctUntilChanged`, `skip`, `startWith` and
    /// the operators that end early; behind an operator that combines
    /// streams (`merge`, `flatMapLatest`, …) such a source is read to its end.
    ///
    /// - Parameter count: How many values to pass on. `0` completes at once without subscribing. Must not
    ///   be negative.
    public func take(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "take(_:) needs a count of 0 or more, got \(count); use take(0) to complete at once.")
        if count == 0 { return .empty() }
        return Observable.recipe({ observer in
            let upstream = SubscriptionSlot()
            let remaining = DelivererBox(count)
            let next = observer.next
            let end = observer.end
            // `upstream` is also the early slot: a source that sends while being subscribed puts its
            // subscription there first, so cancelling the slot after the last value stops it.
            return self.subscribeEndingEarly(Observer(
                next: { value in
                    guard remaining.value > 0 else { return }
                    remaining.value -= 1
                    next(value)
                    if remaining.value == 0 {
                        end(.completed)
                        upstream.cancel()
                    }
                },
                end: { termination in
                    guard remaining.value > 0 else { return }
                    remaining.value = 0
                    end(termination)
                },
                early: upstream
            ), through: upstream, returning: Subscription(upstream), for: observer)
        })
    }
}
