extension ObservableType {
    /// Sends a running accumulation: each value is combined with the previous result by `accumulate`.
    ///
    /// Each subscription starts again from `initial`.
    ///
    /// ```swift
    /// let numbers = PublishSubject<Int>()
    /// let subscription = numbers.scan(0, +).observe { print($0) }
    /// numbers.send(1)
    /// numbers.send(2)
    /// numbers.send(3)
    /// // Prints "1", "3", "6"
    /// ```
    @inlinable
    public func scan<Result>(
        _ initial: Result, _ accumulate: @escaping (Result, Value) -> Result
    ) -> Observable<Result> {
        Observable<Result>.recipe({ observer in
            let accumulated = DelivererBox(initial)
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in
                    accumulated.value = accumulate(accumulated.value, value)
                    next(accumulated.value)
                }
            ))
        })
    }
}
