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
    ///
    /// - Parameter count: How many times to subscribe again; `0` sends the first failure on. Must not be
    ///   negative.
    public func retry(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "retry(_:) needs a count of 0 or more, got \(count); use 0 to pass the first failure on.")
        return retry(count) { _ in Observable.just(()) }
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
    /// - Parameters:
    ///   - count: How many times to subscribe again; must not be negative.
    ///   - delay: How long to wait after each failure; zero or more.
    ///   - scheduler: Where the wait is timed and the stream is subscribed again.
    public func retry(_ count: Int, delay: Duration, scheduler: some Scheduler) -> Observable<Value> {
        precondition(count >= 0, "retry(_:delay:scheduler:) needs a count of 0 or more, got \(count).")
        preconditionNotNegative(delay, "a delay", of: "retry(_:delay:scheduler:)")
        return retry(count) { _ in Observable.timer(delay, scheduler: scheduler).map { _ in () } }
    }

    /// Up to `count` retries, each after the first value of `wait(error)`.
    func retry<Wait: ObservableType>(
        _ count: Int, after wait: @escaping (any Error) -> Wait
    ) -> Observable<Value> where Wait.Value == Void {
        retry(when: { errors in
            // Made once per subscription; the failures reach it one at a time, inside retry's serializer.
            let attempts = DelivererBox(0)
            return errors.flatMapLatest { error -> Observable<Void> in
                attempts.value += 1
                guard attempts.value <= count else { return Observable.failure(error) }
                return wait(error).take(1).asObservable()
            }
        })
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
            var waiting = false
            let serializer = Serializer<RetryInput<Value>> { input in
                let goesOn: Bool
                switch input {
                case .start:
                    subscribeSource()
                    goesOn = true
                case .source(.next(let value)):
                    observer(.next(value))
                    goesOn = true
                case .source(.error(let error)):
                    waiting = true
                    errors.send(error)
                    goesOn = true
                case .trigger(.next):
                    if waiting {
                        waiting = false
                        subscribeSource()
                    }
                    goesOn = true
                case .source(.completed), .trigger(.completed):
                    observer(.completed)
                    goesOn = false
                case .trigger(.error(let error)):
                    observer(.error(error))
                    goesOn = false
                }
                if !goesOn {
                    source.cancel()
                    trigger.cancel()
                }
                return goesOn
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
