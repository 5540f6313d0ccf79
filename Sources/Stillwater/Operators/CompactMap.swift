extension ObservableType {
    /// Transforms each value and passes on the results that are not `nil`.
    ///
    /// ```swift
    /// let input = PublishSubject<String>()
    /// let subscription = input.compactMap { Int($0) }.observe { print($0) }
    /// input.send("12")
    /// input.send("twelve")
    /// // Prints "12"
    /// ```
    @inlinable
    public func compactMap<NewValue>(_ transform: @escaping (Value) -> NewValue?) -> Observable<NewValue> {
        Observable<NewValue>.recipe({ observer in
            let next = observer.next
            return self.subscribe(observer.stage(
                { value in if let kept = transform(value) { next(kept) } }
            ))
        })
    }
}
