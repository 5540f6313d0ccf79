extension ObservableType {
    /// Transforms each value with `transform`.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.map { $0 * 2 }.observe { print($0) }
    /// subject.send(21)
    /// // Prints "42"
    /// ```
    ///
    /// - Complexity: One call of `transform` per value; no allocation per value.
    @inlinable
    public func map<NewValue>(_ transform: @escaping (Value) -> NewValue) -> Observable<NewValue> {
        Observable<NewValue>.recipe({ observer in
            let next = observer.next
            return self.subscribe(observer.stage({ next(transform($0)) }))
        })
    }

    /// Reads the value at `keyPath` of each value.
    ///
    /// ```swift
    /// let users = PublishSubject<(name: String, age: Int)>()
    /// let subscription = users.map(\.name).observe { print($0) }
    /// users.send((name: "Ada", age: 36))
    /// // Prints "Ada"
    /// ```
    @inlinable
    public func map<NewValue>(_ keyPath: KeyPath<Value, NewValue>) -> Observable<NewValue> {
        map { $0[keyPath: keyPath] }
    }
}
