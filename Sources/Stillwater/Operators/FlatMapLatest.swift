extension ObservableType {
    /// Maps each value to a stream and sends the values of the latest such stream only; a new value
    /// cancels the previous inner stream.
    ///
    /// Completes when this stream and the current inner stream have both completed; fails as soon as
    /// either fails. Values from a replaced inner stream are never delivered, even if that stream sends
    /// from another thread at the moment it is replaced.
    ///
    /// ```swift
    /// let query = PublishSubject<String>()
    /// let results = query.flatMapLatest { text in Observable.of(text.uppercased()) }
    /// let subscription = results.observe { print($0) }
    /// query.send("swift")
    /// // Prints "SWIFT"
    /// ```
    @inlinable
    public func flatMapLatest<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        Observable { observer in
            let outer = SubscriptionSlot()
            let inner = SubscriptionSlot()
            var generation = 0
            var outerDone = false
            var innerDone = true
            let route = WeakSerializer<FlatMapLatestWork<Value, Inner.Value>>()
            let serializer = Serializer<FlatMapLatestWork<Value, Inner.Value>> { work in
                switch work {
                case .outer(.next(let value)):
                    generation += 1
                    innerDone = false
                    let current = generation
                    inner.replace(with: nil)
                    inner.replace(with: transform(value).subscribe(Observer(
                        next: { route.submit(.inner(current, .next($0))) },
                        end: { route.submit(.inner(current, $0.event())) }
                    )))
                    return true
                case .outer(.completed):
                    outerDone = true
                    guard innerDone else { return true }
                    observer(.completed)
                    return false
                case .outer(.error(let error)):
                    inner.cancel()
                    observer(.error(error))
                    return false
                case .inner(let source, let event):
                    guard source == generation else { return true }
                    switch event {
                    case .next:
                        observer(event)
                        return true
                    case .completed:
                        innerDone = true
                        guard outerDone else { return true }
                        observer(.completed)
                        return false
                    case .error:
                        outer.cancel()
                        observer(event)
                        return false
                    }
                }
            }
            route.target = serializer
            outer.replace(with: self.subscribe { serializer.submit(.outer($0)) })
            return Subscription {
                outer.cancel()
                inner.cancel()
                serializer.cancel()
            }
        }
    }
}

/// What reaches a `flatMapLatest` node: an outer event, or an event of the inner stream of a generation.
@usableFromInline
enum FlatMapLatestWork<Outer, InnerValue> {
    case outer(Event<Outer>)
    case inner(Int, Event<InnerValue>)
}
