extension ObservableType {
    /// Sends values while `predicate` holds; at the first value for which it does not, completes (without
    /// that value) and cancels its subscription to the stream.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.take(while: { $0 < 3 })
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// for value in 1...5 { subject.send(value) }
    /// // Prints "1", "2", "done"
    /// ```
    ///
    /// `predicate` runs once per value until it first returns `false`, never after. A stream that sends
    /// while it is being subscribed (``Observable/from(_:)-(S)`` over an endless sequence) stops there,
    /// as it does for ``ObservableType/take(_:)``. The end of the stream, before that, passes through.
    public func take(while predicate: @escaping (Value) -> Bool) -> Observable<Value> {
        Observable.recipe({ observer in
            let upstream = SubscriptionSlot()
            let taking = DelivererBox(true)
            let next = observer.next
            let end = observer.end
            return self.subscribeEndingEarly(
                Observer(
                    next: { value in
                        guard taking.value else { return }
                        if predicate(value) { return next(value) }
                        taking.value = false
                        end(.completed)
                        upstream.cancel()
                    },
                    end: { termination in
                        guard taking.value else { return }
                        taking.value = false
                        end(termination)
                    },
                    early: upstream
                ),
                through: upstream, returning: Subscription(upstream), for: observer
            )
        })
    }

    /// Drops values while `predicate` holds; from the first value for which it does not, passes on that
    /// value and everything after it.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.skip(while: { $0 < 3 }).observe { print($0) }
    /// for value in [1, 2, 3, 1, 4] { subject.send(value) }
    /// // Prints "3", "1", "4"
    /// ```
    ///
    /// `predicate` runs once per value until it first returns `false`, never after. The end passes
    /// through.
    @inlinable
    public func skip(while predicate: @escaping (Value) -> Bool) -> Observable<Value> {
        Observable.recipe({ observer in
            let skipping = DelivererBox(true)
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in
                    if skipping.value {
                        guard !predicate(value) else { return }
                        skipping.value = false
                    }
                    next(value)
                }
            ))
        })
    }
}

extension InfallibleType {
    /// `take(while:)` that keeps the fact that the stream never fails.
    public func take(while predicate: @escaping (Value) -> Bool) -> Infallible<Value> {
        Infallible(never: asObservable().take(while: predicate))
    }

    /// `skip(while:)` that keeps the fact that the stream never fails.
    @inlinable
    public func skip(while predicate: @escaping (Value) -> Bool) -> Infallible<Value> {
        Infallible(never: asObservable().skip(while: predicate))
    }
}
