extension ObservableType {
    /// Maps each value to a stream and sends the values of all those streams as they arrive, listening to
    /// at most `maxConcurrent` of them at once.
    ///
    /// A value that comes while `maxConcurrent` inner streams are running waits, in order, and its stream
    /// is subscribed when one of them completes (as RxSwift's `merge(maxConcurrent:)` does; Combine's
    /// `flatMap(maxPublishers:)` asks its upstream for no more values instead, so a subject's extra
    /// values are lost there). Completes when this stream and every inner stream have completed; fails as
    /// soon as any of them fails, and cancels the others. Events of inner streams on different threads are
    /// delivered one at a time.
    ///
    /// ```swift
    /// let ids = PublishSubject<Int>()
    /// let pages = ids.flatMap(maxConcurrent: 2) { id in Observable.of("\(id)a", "\(id)b") }
    /// let subscription = pages.observe { print($0) }
    /// ids.send(1)
    /// ids.send(2)
    /// // Prints "1a", "1b", "2a", "2b"
    /// ```
    ///
    /// - Note: Values that wait for a free place are kept in memory, without bound.
    public func flatMap<Inner: ObservableType>(
        maxConcurrent: Int, _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        precondition(maxConcurrent > 0, "flatMap(maxConcurrent:_:) needs a maxConcurrent of 1 or more, got \(maxConcurrent)")
        return mergeInner(limit: maxConcurrent, whenFull: .wait, transform)
    }

    /// Maps each value to a stream and sends the values of all those streams as they arrive (RxSwift's
    /// `flatMap`, a merge of the inner streams).
    ///
    /// Completes when this stream and every inner stream have completed; fails as soon as any of them
    /// fails, and cancels the others. Events of inner streams on different threads are delivered one at
    /// a time.
    ///
    /// ```swift
    /// let first = PublishSubject<String>()
    /// let second = PublishSubject<String>()
    /// let streams = PublishSubject<PublishSubject<String>>()
    /// let subscription = streams.flatMap { $0 }.observe { print($0) }
    /// streams.send(first)
    /// streams.send(second)
    /// second.send("b")
    /// first.send("a")
    /// // Prints "b", "a"
    /// ```
    public func flatMap<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        mergeInner(limit: .max, whenFull: .wait, transform)
    }

    /// Maps each value to a stream and sends the values of those streams one stream after the other: the
    /// stream of a value is subscribed only after the stream of the value before has completed.
    ///
    /// The same as `flatMap(maxConcurrent: 1, transform)`. Values that come while a stream runs wait, in
    /// order. Completes when this stream and every inner stream have completed; fails as soon as any of
    /// them fails.
    ///
    /// ```swift
    /// let ids = PublishSubject<Int>()
    /// let replies = PublishSubject<String>()
    /// let subscription = ids.concatMap { id in replies.take(1).map { "\(id): \($0)" } }.observe { print($0) }
    /// ids.send(1)
    /// ids.send(2)
    /// replies.send("one")
    /// replies.send("two")
    /// // Prints "1: one", "2: two"
    /// ```
    ///
    /// - Note: Values that wait for their turn are kept in memory, without bound.
    public func concatMap<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        mergeInner(limit: 1, whenFull: .wait, transform)
    }

    /// Maps a value to a stream and sends its values; values that come while that stream runs are
    /// dropped.
    ///
    /// The next value after the stream completed starts a new one. Completes when this stream and the
    /// running inner stream have completed; fails as soon as either fails.
    ///
    /// ```swift
    /// let taps = PublishSubject<Int>()
    /// let request = PublishSubject<String>()
    /// let subscription = taps.flatMapFirst { tap in request.take(1).map { "tap \(tap): \($0)" } }
    ///     .observe { print($0) }
    /// taps.send(1)
    /// taps.send(2)
    /// request.send("done")
    /// taps.send(3)
    /// request.send("again")
    /// // Prints "tap 1: done", "tap 3: again"
    /// ```
    public func flatMapFirst<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        mergeInner(limit: 1, whenFull: .drop, transform)
    }

    /// The engine of `flatMap`, `concatMap` and `flatMapFirst`: runs at most `limit` inner streams at
    /// once, in one serializer; a value that comes when `limit` run waits or is dropped.
    func mergeInner<Inner: ObservableType>(
        limit: Int, whenFull: WhenInnersFull, _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        Observable<Inner.Value>.recipe { observer in
            let outer = SubscriptionSlot()
            let inners = InnerSubscriptions()
            let route = WeakSerializer<MergeInnerWork<Value, Inner.Value>>()
            var waiting = ConsumingQueue<Value>()
            var running = 0
            var lastID = 0
            var outerDone = false
            func start(_ value: Value) {
                running += 1
                lastID += 1
                let id = lastID
                inners.insert(transform(value).subscribe { route.submit(.inner(id, $0)) }, for: id)
            }
            let serializer = Serializer<MergeInnerWork<Value, Inner.Value>> { work in
                switch work {
                case .outer(.next(let value)):
                    if running < limit {
                        start(value)
                    } else if whenFull == .wait {
                        waiting.append(value)
                    }
                    return true
                case .inner(_, .next(let value)):
                    observer.next(value)
                    return true
                case .inner(let id, .completed):
                    inners.remove(id)
                    running -= 1
                    if let value = waiting.popFirst() {
                        start(value)
                        return true
                    }
                    guard outerDone && running == 0 else { return true }
                    observer.end(.completed)
                    return false
                case .outer(.completed):
                    outerDone = true
                    guard running == 0 else { return true }
                    observer.end(.completed)
                    return false
                case .outer(.error(let error)), .inner(_, .error(let error)):
                    outer.cancel()
                    inners.cancel()
                    observer.end(.failed(error))
                    return false
                }
            }
            route.target = serializer
            let subscription = Subscription {
                outer.cancel()
                inners.cancel()
                serializer.cancel()
            }
            // A subscriber that has had enough while this stream is still being subscribed (take) cancels
            // `subscription`, which cancels `outer`; a source that sends while being subscribed put its
            // own subscription there first, so it stops (see `Observer.early`).
            observer.early?.replace(with: subscription)
            outer.replace(with: self.subscribe(Observer(
                next: { serializer.submit(.outer(.next($0))) },
                end: { serializer.submit(.outer($0.event())) },
                early: outer)))
            return subscription
        }
    }
}

/// What `mergeInner` does with a value that comes while its limit of inner streams run.
enum WhenInnersFull {
    /// Keep it, and subscribe its stream when one of the running ones completes (`flatMap`, `concatMap`).
    case wait
    /// Drop it (`flatMapFirst`).
    case drop
}

/// What reaches a `flatMap` node: an outer event, or an event of the inner stream with an id.
enum MergeInnerWork<Outer, InnerValue> {
    case outer(Event<Outer>)
    case inner(Int, Event<InnerValue>)
}

/// The subscriptions of the running inner streams of a `flatMap`, by id. After ``cancel()`` it cancels
/// what it held and every subscription inserted later.
final class InnerSubscriptions: Sendable {
    private let state = Lock<(running: [Int: Subscription], isCancelled: Bool)>(([:], false))

    func insert(_ subscription: Subscription, for id: Int) {
        let cancelled = state.withLock { state in
            if !state.isCancelled { state.running[id] = subscription }
            return state.isCancelled
        }
        if cancelled { subscription.cancel() }
    }

    /// Forgets the subscription of an inner stream that completed.
    func remove(_ id: Int) {
        let removed = state.withLock { $0.running.removeValue(forKey: id) }
        withExtendedLifetime(removed) {}
    }

    func cancel() {
        let running = state.withLock { state in
            state.isCancelled = true
            defer { state.running = [:] }
            return state.running
        }
        for subscription in running.values { subscription.cancel() }
    }
}
