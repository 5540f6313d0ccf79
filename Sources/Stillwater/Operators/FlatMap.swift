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
    /// once, in one serializer; a value that comes when `limit` run waits or is dropped. The serializer's
    /// handler owns the subscription's ``MergeInnerMachine`` and does what it answers.
    func mergeInner<Inner: ObservableType>(
        limit: Int, whenFull: WhenInnersFull, _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        Observable<Inner.Value>.recipe { observer in
            let outer = SubscriptionSlot()
            let inners = InnerSubscriptions()
            let route = WeakSerializer<MergeInnerWork<Value, Inner.Value>>()
            var machine = MergeInnerMachine<Value>(limit: limit, whenFull: whenFull)
            func perform(_ step: MergeInnerMachine<Value>.Step) -> Bool {
                switch step {
                case .none:
                    return true
                case .start(let value, let id):
                    inners.insert(transform(value).subscribe { route.submit(.inner(id, $0)) }, for: id)
                    return true
                case .complete:
                    observer.end(.completed)
                    return false
                }
            }
            let serializer = Serializer<MergeInnerWork<Value, Inner.Value>> { work in
                switch work {
                case .outer(.next(let value)):
                    return perform(machine.outerValue(value))
                case .inner(_, .next(let value)):
                    observer.next(value)
                    return true
                case .inner(let id, .completed):
                    inners.remove(id)
                    return perform(machine.innerCompleted())
                case .outer(.completed):
                    return perform(machine.outerCompleted())
                case .outer(.error(let error)), .inner(_, .error(let error)):
                    machine.fail()
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

/// The state of one `flatMap`, `concatMap` or `flatMapFirst` subscription: how many inner streams run,
/// the values waiting for a place, whether the outer stream has completed. Each method takes one event
/// and answers what to do; the serializer's handler holds the machine (one thread at a time) and does it.
struct MergeInnerMachine<Value> {
    enum State {
        /// `running` inner streams run (at most the limit); `outerDone` once the outer stream completed.
        case active(running: Int, outerDone: Bool)
        /// The result has ended.
        case finished
    }

    /// What the handler does next.
    enum Step {
        /// Nothing.
        case none
        /// Subscribes the stream of `value`, whose events carry `id`.
        case start(Value, id: Int)
        /// Completes the result: the outer stream and every inner stream have completed.
        case complete
    }

    private(set) var state = State.active(running: 0, outerDone: false)
    /// Values that came while `limit` inner streams ran, oldest first (``WhenInnersFull/wait`` only).
    private(set) var waiting = ConsumingQueue<Value>()
    /// The id of the last inner stream started.
    private var lastID = 0
    let limit: Int
    let whenFull: WhenInnersFull

    init(limit: Int, whenFull: WhenInnersFull) {
        self.limit = limit
        self.whenFull = whenFull
    }

    /// A value of the outer stream: start its stream if there is a place, else wait or drop it.
    mutating func outerValue(_ value: Value) -> Step {
        guard case .active(let running, let outerDone) = state else { return .none }
        if running < limit { return start(value, running: running, outerDone: outerDone) }
        if whenFull == .wait { waiting.append(value) }
        return .none
    }

    /// An inner stream completed: start the oldest waiting value's stream in its place, or complete if
    /// nothing else runs and the outer stream has completed.
    mutating func innerCompleted() -> Step {
        guard case .active(let running, let outerDone) = state else { return .none }
        if let value = waiting.popFirst() { return start(value, running: running - 1, outerDone: outerDone) }
        return settle(running: running - 1, outerDone: outerDone)
    }

    /// The outer stream completed: complete if no inner stream runs.
    mutating func outerCompleted() -> Step {
        guard case .active(let running, _) = state else { return .none }
        return settle(running: running, outerDone: true)
    }

    /// The outer stream or an inner stream failed: the result ends.
    mutating func fail() {
        state = .finished
        waiting = ConsumingQueue()
    }

    private mutating func start(_ value: Value, running: Int, outerDone: Bool) -> Step {
        lastID += 1
        state = .active(running: running + 1, outerDone: outerDone)
        return .start(value, id: lastID)
    }

    private mutating func settle(running: Int, outerDone: Bool) -> Step {
        guard outerDone && running == 0 else {
            state = .active(running: running, outerDone: outerDone)
            return .none
        }
        state = .finished
        return .complete
    }
}

/// What `mergeInner` does with a value that comes while its limit of inner streams run.
enum WhenInnersFull {
    /// Keep it, and subscribe its stream when one of the running ones completes (`flatMap`, `concatMap`).
    case wait
    /// Drop it (`flatMapFirst`).
    case drop
}
