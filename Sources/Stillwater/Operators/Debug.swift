extension ObservableType {
    /// Prints a line for every subscribe, value, error, completion and cancellation, prefixed by `label`.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.debug("numbers").observe { _ in }
    /// subject.send(1)
    /// subscription.cancel()
    /// // Prints "numbers: subscribed", "numbers: next(1)", "numbers: cancelled"
    /// ```
    ///
    /// - Parameters:
    ///   - label: Names the stream in each line.
    ///   - printer: Where the lines go; standard output by default.
    public func debug(
        _ label: String, printer: @escaping (String) -> Void = { print($0) }
    ) -> Observable<Value> {
        Observable { observer in
            printer("\(label): subscribed")
            let upstream = self.subscribe { event in
                printer("\(label): \(event)")
                observer(event)
            }
            return Subscription {
                printer("\(label): cancelled")
                upstream.cancel()
            }
        }
    }
}
