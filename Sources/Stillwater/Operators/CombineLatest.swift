extension Observable where Value == Any {
    /// Sends a tuple of the latest values of all `sources` whenever one of them sends, once each has sent
    /// at least one value.
    ///
    /// Completes when all sources have completed (or at once when one completes before sending anything);
    /// fails as soon as one fails. Works for any number of sources.
    ///
    /// ```swift
    /// let name = BehaviorSubject("Ada")
    /// let age = BehaviorSubject(36)
    /// let subscription = Observable.combineLatest(name, age).observe { print("\($0) \($1)") }
    /// age.send(37)
    /// // Prints "Ada 36", "Ada 37"
    /// ```
    ///
    /// - Complexity: Each value is boxed once while it is the latest; a new tuple is built per event.
    public static func combineLatest<each Source: ObservableType>(
        _ sources: repeat each Source
    ) -> Observable<(repeat (each Source).Value)> {
        var erased: [Observable<Any>] = []
        for source in repeat each sources {
            erased.append(source.map { $0 as Any })
        }
        let count = erased.count
        return combineLatestErased(erased).map { values in
            var index = 0
            func next<T>(_: T.Type) -> T {
                defer { index += 1 }
                return values[index] as! T
            }
            precondition(values.count == count)
            return (repeat next((each Source).Value.self))
        }
    }

    /// The engine of `combineLatest`: latest values by index, in a serializer.
    static func combineLatestErased(_ sources: [Observable<Any>]) -> Observable<[Any]> {
        if sources.isEmpty { return .empty() }
        return Observable<[Any]> { observer in
            let upstream = sources.map { _ in SubscriptionSlot() }
            var latest = [Any?](repeating: nil, count: sources.count)
            var missing = sources.count
            var active = sources.count
            let serializer = Serializer<(index: Int, event: Event<Any>)> { item in
                switch item.event {
                case .next(let value):
                    if latest[item.index] == nil { missing -= 1 }
                    latest[item.index] = value
                    if missing == 0 { observer(.next(latest.map { $0! })) }
                    return true
                case .completed:
                    active -= 1
                    guard active == 0 || latest[item.index] == nil else { return true }
                    observer(.completed)
                    for slot in upstream { slot.cancel() }
                    return false
                case .error(let error):
                    observer(.error(error))
                    for slot in upstream { slot.cancel() }
                    return false
                }
            }
            for (index, (source, slot)) in zip(sources, upstream).enumerated() {
                slot.replace(with: source.subscribe { serializer.submit((index, $0)) })
            }
            return Subscription {
                for slot in upstream { slot.cancel() }
                serializer.cancel()
            }
        }
    }
}
