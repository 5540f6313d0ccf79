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
    /// - Parameter count: How many values to pass on. `0` completes at once without subscribing. Must not
    ///   be negative.
    /// - Note: The subscription to the stream exists only once `subscribe` returns. A stream that sends
    ///   all its values synchronously while being subscribed (``Observable/from(_:)-(S)`` over a sequence) is
    ///   therefore read to its end: the values after `count` are dropped, but they are still produced, and
    ///   an endless synchronous sequence never returns. Hot sources (subjects, relays, properties) stop at
    ///   once.
    public func take(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "take(_:) needs a count of 0 or more, got \(count); use take(0) to complete at once.")
        if count == 0 { return .empty() }
        return Observable { observer in
            let upstream = SubscriptionSlot()
            var remaining = count
            var downstream: ((Event<Value>) -> Void)? = observer
            let subscription = self.subscribe { event in
                guard let observer = downstream else { return }
                switch event {
                case .next:
                    remaining -= 1
                    observer(event)
                    if remaining == 0 {
                        downstream = nil
                        observer(.completed)
                        upstream.cancel()
                    }
                case .error, .completed:
                    downstream = nil
                    observer(event)
                }
            }
            upstream.replace(with: subscription)
            return Subscription(upstream)
        }
    }
}
