extension ObservableType {
    /// Passes on only the values for which `isIncluded` returns `true`; terminal events always pass.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.filter { $0.isMultiple(of: 2) }.observe { print($0) }
    /// subject.send(1)
    /// subject.send(2)
    /// // Prints "2"
    /// ```
    ///
    /// - Complexity: One call of `isIncluded` per value; no allocation per value.
    @inlinable
    public func filter(_ isIncluded: @escaping (Value) -> Bool) -> Observable<Value> {
        Observable.recipe({ observer in
            let next = observer.next
            return self.subscribe(observer.stage({ if isIncluded($0) { next($0) } }))
        })
    }
}
