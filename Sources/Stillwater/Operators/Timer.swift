extension Observable where Value == Int {
    /// A stream that sends `0` once `dueTime` has passed, then completes.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let subscription = Observable.timer(.seconds(1), scheduler: scheduler).observe { _ in print("time's up") }
    /// scheduler.advance(by: .seconds(1))
    /// // one second after subscribing:
    /// // Prints "time's up"
    /// ```
    ///
    /// With `.main`, the value comes only while the main queue is served: a command-line program calls
    /// `dispatchMain()` or uses a scheduler on its own queue (see ``MainActorScheduler``).
    ///
    /// Each subscription has its own timer; cancelling cancels and releases it.
    ///
    /// - Parameters:
    ///   - dueTime: How long after the subscription the value is sent; a negative time counts as zero.
    ///   - scheduler: The clock, and where the value is sent from.
    public static func timer(_ dueTime: Duration, scheduler: some Scheduler) -> Observable<Int> {
        create { emitter in
            Subscription(scheduler.schedule(after: dueTime) {
                emitter.send(0)
                emitter.complete()
            })
        }
    }

    /// A stream that sends `0` once `dueTime` has passed, then `1`, `2`, … every `period`; it never
    /// completes.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()          // from StillwaterTesting
    /// let recorder = Recorder(Observable.timer(.seconds(2), period: .seconds(1), scheduler: scheduler))
    /// scheduler.advance(by: .seconds(4))
    /// print(recorder.values)
    /// // Prints "[0, 1, 2]"
    /// ```
    ///
    /// - Parameters:
    ///   - dueTime: When the first value is sent; a negative time counts as zero.
    ///   - period: The time between values; more than zero.
    ///   - scheduler: The clock, and where the values are sent from.
    public static func timer(_ dueTime: Duration, period: Duration, scheduler: some Scheduler) -> Observable<Int> {
        precondition(period > .zero,
                     "Observable.timer(_:period:scheduler:) needs a period of more than zero, got \(period).")
        return create { emitter in
            var count = 0
            return Subscription(scheduler.schedule(after: dueTime, interval: period) {
                emitter.send(count)
                count += 1
            })
        }
    }

    /// A stream that sends `0`, `1`, `2`, … every `period`, the first one `period` after subscribing; it
    /// never completes.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let ticks = Observable.interval(.seconds(1), scheduler: scheduler).take(3)
    /// let subscription = ticks.observe { print($0) }
    /// scheduler.advance(by: .seconds(5))
    /// // one a second:
    /// // Prints "0", "1", "2"
    /// ```
    ///
    /// With `.main`, the values come only while the main queue is served: a command-line program calls
    /// `dispatchMain()` or uses a scheduler on its own queue (see ``MainActorScheduler``).
    ///
    /// Each subscription has its own timer; cancelling cancels and releases it.
    ///
    /// - Parameters:
    ///   - period: The time between values; more than zero.
    ///   - scheduler: The clock, and where the values are sent from.
    public static func interval(_ period: Duration, scheduler: some Scheduler) -> Observable<Int> {
        precondition(period > .zero,
                     "Observable.interval(_:scheduler:) needs a period of more than zero, got \(period).")
        return timer(period, period: period, scheduler: scheduler)
    }
}
