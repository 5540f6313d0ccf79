extension ObservableType {
    /// Combines every value with `accumulate`, starting from `initial`, and sends the result once, when
    /// the stream completes; then completes.
    ///
    /// ```swift
    /// let prices = PublishSubject<Int>()
    /// let subscription = prices.reduce(0, +).observe { print("total \($0)") }
    /// for price in [3, 4, 5] { prices.send(price) }
    /// prices.complete()
    /// // Prints "total 12"
    /// ```
    ///
    /// A stream that completes without values gives `initial` (as in RxSwift and Combine). A failure
    /// passes through, and the accumulation is dropped. ``ObservableType/scan(_:_:)`` sends every step instead.
    public func reduce<Result>(
        _ initial: Result, _ accumulate: @escaping (Result, Value) -> Result
    ) -> Observable<Result> {
        accumulatedAtEnd(initial) { result, value in result = accumulate(result, value) }
    }

    /// Collects every value into one array, sent when the stream completes; then completes.
    ///
    /// ```swift
    /// let subscription = Observable.of(1, 2, 3).toArray().observe { print($0) }
    /// // Prints "[1, 2, 3]"
    /// ```
    ///
    /// A stream that completes without values gives `[]`. A failure passes through, and the values
    /// collected are dropped.
    ///
    /// - Complexity: Amortised O(1) per value; all the values are held until the end.
    public func toArray() -> Observable<[Value]> {
        accumulatedAtEnd([Value]()) { array, value in array.append(value) }
    }

    /// Changes a per-subscription result in place with each value, and sends it when the stream
    /// completes (then completes); a failure drops it and passes through.
    func accumulatedAtEnd<Result>(
        _ initial: Result, _ step: @escaping (inout Result, Value) -> Void
    ) -> Observable<Result> {
        Observable<Result>.recipe({ observer in
            let accumulated = DelivererBox<Result?>(initial)
            let next = observer.next
            let end = observer.end
            return self.subscribe(Observer(
                next: { value in
                    guard accumulated.value != nil else { return }
                    step(&accumulated.value!, value)
                },
                end: { termination in
                    let result = accumulated.value.take()
                    if case .completed = termination, let result { next(result) }
                    end(termination)
                },
                early: observer.early
            ))
        })
    }
}

extension InfallibleType {
    /// `reduce(_:_:)` that keeps the fact that the stream never fails.
    public func reduce<Result>(
        _ initial: Result, _ accumulate: @escaping (Result, Value) -> Result
    ) -> Infallible<Result> {
        Infallible<Result>(never: asObservable().reduce(initial, accumulate))
    }

    /// `toArray()` that keeps the fact that the stream never fails.
    public func toArray() -> Infallible<[Value]> {
        Infallible<[Value]>(never: asObservable().toArray())
    }
}
