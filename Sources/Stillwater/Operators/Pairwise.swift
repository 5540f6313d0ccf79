extension ObservableType {
    /// Sends each value together with the one before it, as `(previous, current)`; the first value only
    /// becomes the first `previous`.
    ///
    /// ```swift
    /// let readings = PublishSubject<Int>()
    /// let subscription = readings.pairwise().observe { print("\($0.0) -> \($0.1)") }
    /// for value in [1, 4, 9] { readings.send(value) }
    /// // Prints "1 -> 4", "4 -> 9"
    /// ```
    ///
    /// The end passes through. Each subscription starts without a previous value.
    @inlinable
    public func pairwise() -> Observable<(Value, Value)> {
        Observable<(Value, Value)>.recipe({ observer in
            let previous = DelivererBox<Value?>(nil)
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in
                    if let before = previous.value { next((before, value)) }
                    previous.value = value
                }
            ))
        })
    }
}

extension InfallibleType {
    /// `pairwise()` that keeps the fact that the stream never fails.
    @inlinable
    public func pairwise() -> Infallible<(Value, Value)> {
        Infallible(never: asObservable().pairwise())
    }
}
