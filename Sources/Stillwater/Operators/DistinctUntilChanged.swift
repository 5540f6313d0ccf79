extension ObservableType where Value: Equatable {
    /// Drops each value that equals the one before it. The first value always passes.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.distinctUntilChanged().observe { print($0) }
    /// for value in [1, 1, 2, 2, 1] { subject.send(value) }
    /// // Prints "1", "2", "1"
    /// ```
    ///
    /// - Complexity: One comparison per value; no allocation per value.
    @inlinable
    public func distinctUntilChanged() -> Observable<Value> {
        Observable.recipe({ observer in
            let previous = DelivererBox<Value?>(Value?.none)
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in
                    if let last = previous.value, last == value { return }
                    previous.value = value
                    next(value)
                }
            ))
        })
    }
}

extension ObservableType {
    /// Drops each value that `isEquivalent` says equals the one before it. The first value always passes.
    ///
    /// - Parameter isEquivalent: Returns `true` when the two values count as equal (the later one is
    ///   dropped).
    ///
    /// ```swift
    /// let words = PublishSubject<String>()
    /// let subscription = words
    ///     .distinctUntilChanged(by: { $0.lowercased() == $1.lowercased() })
    ///     .observe { print($0) }
    /// for word in ["Hi", "hi", "Bye"] { words.send(word) }
    /// // Prints "Hi", "Bye"
    /// ```
    @inlinable
    public func distinctUntilChanged(by isEquivalent: @escaping (Value, Value) -> Bool) -> Observable<Value> {
        distinct(key: { $0 }, isEquivalent: isEquivalent)
    }

    /// Drops each value whose `key` equals the previous value's. The first value always passes.
    ///
    /// ```swift
    /// let users = PublishSubject<(id: Int, seen: Int)>()
    /// let subscription = users.distinctUntilChanged(\.id).observe { print($0.id) }
    /// users.send((id: 1, seen: 0))
    /// users.send((id: 1, seen: 5))
    /// users.send((id: 2, seen: 5))
    /// // Prints "1", "2"
    /// ```
    @inlinable
    public func distinctUntilChanged<Key: Equatable>(_ key: KeyPath<Value, Key>) -> Observable<Value> {
        distinct(key: { $0[keyPath: key] }, isEquivalent: ==)
    }

    /// The one implementation behind the `distinctUntilChanged` forms that take a rule.
    @inlinable
    func distinct<Key>(
        key: @escaping (Value) -> Key, isEquivalent: @escaping (Key, Key) -> Bool
    ) -> Observable<Value> {
        Observable.recipe({ observer in
            let previous = DelivererBox<Key?>(Key?.none)
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in
                    let current = key(value)
                    if let last = previous.value, isEquivalent(last, current) { return }
                    previous.value = current
                    next(value)
                }
            ))
        })
    }
}
