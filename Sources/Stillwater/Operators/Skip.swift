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
        return Observable { observer in
            var remaining = count
            return self.subscribe { event in
                if case .next = event, remaining > 0 {
                    remaining -= 1
                    return
                }
                observer(event)
            }
        }
    }
}
