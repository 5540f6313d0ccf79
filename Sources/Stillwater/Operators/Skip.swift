extension ObservableType {
    /// Drops the first `count` values, then passes on everything.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.skip(2).observe { print($0) }
    /// for value in 1...4 { subject.send(value) }
    /// // Prints "3", "4"
    /// ```
    ///
    /// - Parameter count: How many values to drop; `0` passes everything. Must not be negative.
    public func skip(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "skip(_:) needs a count of 0 or more, got \(count); use skip(0) to drop nothing.")
        return Observable.recipe({ observer in
            let remaining = DelivererBox(count)
            let next = observer.next
            return self.subscribe(observer.stage { value in
                if remaining.value > 0 {
                    remaining.value -= 1
                    return
                }
                next(value)
            })
        })
    }
}
