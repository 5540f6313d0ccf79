/// What reaches the serializer of `retry(when:)`: the first subscription, an event of the current
/// subscription to the source, or an event of the trigger.
enum RetryInput<Value> {
    case start
    case source(Event<Value>)
    case trigger(Event<Void>)
}

extension ObservableType {
    /// Subscribes to this stream again after a failure, up to `count` times; the failure after the last
    /// retry is sent on.
    ///
    /// ```swift
    /// struct Flaky: Error {}
    /// var attempts = 0
    /// let request = Observable<String>.create { emitter in
    ///     attempts += 1
    ///     if attempts < 3 { emitter.fail(Flaky()) } else { emitter.send("ok after \(attempts) attempts") }
    ///     return .empty
    /// }
    /// let subscription = request.retry(5).observe { print($0) }
    /// // Prints "ok after 3 attempts"
    /// ```
    ///
    /// - The values of a failed attempt stay sent: a retry starts the stream over, and its values follow.
    /// - A source that fails while it is being subscribed is subscribed again after that subscribe
    ///   returns, never from inside it, so many retries do not grow the stack.
    /// - `count` counts the subscriptions after the first, as Combine's `retry` does (RxSwift's
    ///   `retry(3)` means three subscriptions in all).
    /// - Events reach the observer one at a time and in order, each on the thread that sent it (or on
    ///   the thread delivering at that moment); cancelling cancels the current subscription to this
    ///   stream. When the result ends, no subscription to this stream is
    ///   left behind, also when the last attempt failed while it was being subscribed.
    ///
    /// - Complexity: O(1) per value. A subscription allocates its state once, and each attempt costs one
    ///   subscription to this stream.
    ///
    /// - Parameter count: How many times to subscribe again; `0` sends the first failure on. Must not be
    ///   negative.
    public func retry(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "retry(_:) needs a count of 0 or more, got \(count); use 0 to pass the first failure on.")
        // An immediate scheduler: the retry follows the failure at once, and every event is sent on the
        // thread that caused it.
        return timedOperator(scheduler: .immediate, RetryState<Value>(count: count, delay: .zero))
    }

    /// Subscribes to this stream again `delay` after a failure, on `scheduler`, up to `count` times; the
    /// failure after the last retry is sent on.
    ///
    /// ```swift
    /// struct Flaky: Error {}
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes a queue scheduler
    /// var attempts = 0
    /// let request = Observable<String>.create { emitter in
    ///     attempts += 1
    ///     if attempts < 3 { emitter.fail(Flaky()) } else { emitter.send("ok") }
    ///     return .empty
    /// }
    /// let subscription = request.retry(3, delay: .seconds(1), scheduler: scheduler).observe { print($0) }
    /// scheduler.advance(by: .seconds(1))
    /// print(attempts)
    /// scheduler.advance(by: .seconds(1))
    /// // Prints "2", "ok"
    /// ```
    ///
    /// - Every event, the values of each attempt, the completion and the last failure, is sent from
    ///   `scheduler` (Combine's rule), one at a time and in order, each handed to the scheduler as soon as
    ///   it arrives. The first subscription is made at once; each later one from `scheduler`.
    /// - Cancelling drops the events not yet sent, cancels the wait and the current subscription to this
    ///   stream. When the result ends, no subscription to this stream is left behind.
    ///
    /// - Complexity: O(1) per value. A subscription allocates its state once; each retry costs one timer
    ///   run and one subscription to this stream.
    ///
    /// - Parameters:
    ///   - count: How many times to subscribe again; must not be negative.
    ///   - delay: How long to wait after each failure; zero or more.
    ///   - scheduler: Where the wait is timed, the stream is subscribed again, and every event is sent
    ///     from.
    public func retry(_ count: Int, delay: Duration, scheduler: some Scheduler) -> Observable<Value> {
        precondition(count >= 0, "retry(_:delay:scheduler:) needs a count of 0 or more, got \(count).")
        preconditionNotNegative(delay, "a delay", of: "retry(_:delay:scheduler:)")
        return timedOperator(scheduler: scheduler, RetryState<Value>(count: count, delay: delay))
    }

    /// Subscribes to this stream again each time the trigger made by `notifier` sends a value after a
    /// failure.
    ///
    /// `notifier` is called once per subscription with the stream of this stream's failures, and returns
    /// the trigger. After a failure, the trigger's next value subscribes again; the trigger completing
    /// completes the result, and the trigger failing fails it (that is how to give up). A completion of
    /// this stream completes the result and ends the trigger.
    ///
    /// ```swift
    /// struct Flaky: Error {}
    /// let scheduler = TestScheduler()       // from StillwaterTesting
    /// var attempts = 0
    /// let request = Observable<String>.create { emitter in
    ///     attempts += 1
    ///     if attempts < 3 { emitter.fail(Flaky()) } else { emitter.send("ok") }
    ///     return .empty
    /// }
    /// // Back off: wait one second more after each failure.
    /// let subscription = request.retry(when: { errors in
    ///     errors.scan(0) { waited, _ in waited + 1 }
    ///         .flatMapLatest { seconds in Observable.timer(.seconds(seconds), scheduler: scheduler) }
    /// }).observe { print($0) }
    /// scheduler.advance(by: .seconds(3))
    /// // Prints "ok"
    /// ```
    ///
    /// - Events of the source and of the trigger reach the observer one at a time, whichever threads they
    ///   come from; a source that fails while it is being subscribed is subscribed again after that
    ///   subscribe returns, never from inside it.
    /// - A value of the trigger while no failure waits is ignored.
    /// - Cancelling cancels the source and the trigger.
    public func retry<Trigger: ObservableType>(
        when notifier: @escaping (Observable<any Error>) -> Trigger
    ) -> Observable<Value> {
        Observable { observer in
            let source = SubscriptionSlot()
            let trigger = SubscriptionSlot()
            let errors = PublishSubject<any Error>()
            let route = WeakSerializer<RetryInput<Value>>()
            let subscribeSource = { source.replace(with: self.subscribe { route.submit(.source($0)) }) }
            var phase = RetryWhenPhase.starting
            let serializer = Serializer<RetryInput<Value>> { input in
                switch phase.take(input) {
                case .none:
                    return true
                case .subscribe:
                    subscribeSource()
                    return true
                case .send(let value):
                    observer(.next(value))
                    return true
                case .notify(let error):
                    errors.send(error)
                    return true
                case .end(let event):
                    source.cancel()
                    trigger.cancel()
                    observer(event)
                    return false
                }
            }
            route.target = serializer
            trigger.replace(with: notifier(errors.asObservable()).subscribe { event in
                route.submit(.trigger(event.map { _ in () }))
            })
            serializer.submit(.start)
            return Subscription {
                source.cancel()
                trigger.cancel()
                serializer.cancel()
            }
        }
    }
}

/// The state machine of `retry(when:)`, run on its serializer: subscribed to the source, or waiting for
/// the trigger after a failure.
enum RetryWhenPhase {
    case starting
    case subscribed
    case waitingForTrigger
    case ended

    /// What `retry(when:)` must do for one input.
    enum Action<Value> {
        case none
        case subscribe
        case send(Value)
        case notify(any Error)
        case end(Event<Value>)
    }

    /// Takes `input` and says what to do.
    mutating func take<Value>(_ input: RetryInput<Value>) -> Action<Value> {
        switch (self, input) {
        case (.ended, _):
            return .none
        case (.starting, .start):
            self = .subscribed
            return .subscribe
        case (_, .start):
            return .none
        case (_, .source(.next(let value))):
            return .send(value)
        case (_, .source(.error(let error))):
            self = .waitingForTrigger
            return .notify(error)
        case (.waitingForTrigger, .trigger(.next)):
            self = .subscribed
            return .subscribe
        case (_, .trigger(.next)):
            return .none
        case (_, .source(.completed)), (_, .trigger(.completed)):
            self = .ended
            return .end(.completed)
        case (_, .trigger(.error(let error))):
            self = .ended
            return .end(.error(error))
        }
    }
}

/// The state machine of `retry(_:)` and `retry(_:delay:scheduler:)`: subscribed to the source with
/// retries left, or waiting for the timer before subscribing again.
struct RetryState<Value>: TimedStateMachine {
    enum Phase {
        case subscribed(retriesLeft: Int)
        case waiting(retriesLeft: Int)
    }

    let delay: Duration
    private var phase: Phase

    init(count: Int, delay: Duration) {
        self.delay = delay
        phase = .subscribed(retriesLeft: count)
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        // While waiting, only the failed subscription could still send: nothing of it counts.
        guard case .subscribed(let left) = phase else { return }
        guard case .error = event, left > 0 else {
            step.pass(event)
            return
        }
        phase = .waiting(retriesLeft: left - 1)
        step.startTimer(after: delay)
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {
        guard case .waiting(let left) = phase else { return }
        phase = .subscribed(retriesLeft: left)
        step.subscribeAgain()
    }
}
