extension ObservableType {
    /// Sends `values` first, then everything the stream sends.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.startWith(0).observe { print($0) }
    /// subject.send(1)
    /// // Prints "0", "1"
    /// ```
    public func startWith(_ values: Value...) -> Observable<Value> {
        startWith(contentsOf: values)
    }

    /// Sends `values` first, then everything the stream sends (``startWith(_:)`` with an array).
    public func startWith(contentsOf values: [Value]) -> Observable<Value> {
        Observable.recipe({ observer in
            for value in values { observer.next(value) }
            return self.subscribe(observer)
        })
    }
}
