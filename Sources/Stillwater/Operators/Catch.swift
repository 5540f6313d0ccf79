extension ObservableType {
    /// Recovers from a failure: when this stream fails, continues with the stream `handler` makes from
    /// the error. Its values follow the ones already sent, and its end is the end.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let pages = PublishSubject<String>()
    /// let subscription = pages
    ///     .catch { _ in Observable.of("cached page") }
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// pages.send("page 1")
    /// pages.fail(Offline())
    /// // Prints "page 1", "cached page", "done"
    /// ```
    ///
    /// - A completion passes through; `handler` runs only on a failure, at most once per subscription,
    ///   on the thread that delivered the failure.
    /// - To fail after all (an error you do not recover from), return ``Observable/failure(_:)``.
    /// - To try the same stream again instead, use ``retry(_:)``.
    /// - Cancelling cancels this stream or, after a failure, the fallback.
    @inlinable
    public func `catch`<Fallback: ObservableType>(
        _ handler: @escaping (any Error) -> Fallback
    ) -> Observable<Value> where Fallback.Value == Value {
        Observable.recipe({ observer in
            // One slot: this stream's subscription, then the fallback's in its place. A fallback put
            // there while this stream is still being subscribed (it failed at once) stays: `fill` keeps
            // it and cancels the subscription of the stream that failed.
            let current = SubscriptionSlot()
            let next = observer.next
            let end = observer.end
            current.fill(with: self.subscribe(Observer(
                next: next,
                end: { termination in
                    guard case .failed(let error) = termination else { return end(termination) }
                    current.replace(with: handler(error).subscribe(Observer(next: next, end: end)))
                }
            )))
            return Subscription(current)
        })
    }

    /// Recovers from a failure by sending `value`, then completing.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let requests = PublishSubject<Int>()
    /// let subscription = requests.catchAndReturn(0)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// requests.send(3)
    /// requests.fail(Offline())
    /// // Prints "3", "0", "done"
    /// ```
    ///
    /// The same as ``replaceError(with:)``; the two names are the ones RxSwift and Combine users know.
    public func catchAndReturn(_ value: Value) -> Observable<Value> {
        self.catch { _ in Observable.just(value) }
    }

    /// Replaces a failure with `value`, then completes; the same as ``catchAndReturn(_:)``.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let status = PublishSubject<String>()
    /// let subscription = status.replaceError(with: "offline").observe { print($0) }
    /// status.send("online")
    /// status.fail(Offline())
    /// // Prints "online", "offline"
    /// ```
    public func replaceError(with value: Value) -> Observable<Value> {
        catchAndReturn(value)
    }

    /// This stream as one that never fails: a failure is replaced by `value`, then the stream completes.
    ///
    /// The result is an ``Infallible``, so a `for await` loop over its ``InfallibleType/values`` needs no
    /// `try`, and the operators that cannot fail keep it infallible.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let readings = PublishSubject<Int>()
    /// let display = readings.asInfallible(onErrorJustReturn: -1).map { "\($0) °C" }
    /// let subscription = display.observe { print($0) }
    /// readings.send(21)
    /// readings.fail(Offline())
    /// // Prints "21 °C", "-1 °C"
    /// ```
    public func asInfallible(onErrorJustReturn value: Value) -> Infallible<Value> {
        Infallible(never: catchAndReturn(value))
    }
}
