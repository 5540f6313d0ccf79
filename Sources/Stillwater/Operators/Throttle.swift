extension ObservableType {
    /// Sends at most one value per `interval`: the first at once, then, at the end of each interval, the
    /// newest value (or, with `latest: false`, the first one) that arrived during it.
    ///
    /// Use it for a progress line or a position that should update steadily, not for every change.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let progress = PublishSubject<Int>()
    /// let subscription = progress
    ///     .throttle(for: .seconds(1), scheduler: scheduler)
    ///     .observe { print("\($0)%") }
    /// for percent in [10, 20, 30] { progress.send(percent) }
    /// scheduler.advance(by: .seconds(1))
    /// // Prints "10%", "30%"
    /// ```
    ///
    /// The rules: a value that arrives when no interval is running is sent at once and starts one. Values
    /// that arrive while it runs are held (the newest, or with `latest: false` the first). When the interval
    /// ends, a held value is sent and a new interval starts; with nothing held, the throttle is idle again.
    ///
    /// In marbles (one frame per character, `interval` of 3 frames):
    /// ```
    /// source:          -abc-------d-|
    /// latest: true:    -a--c------d-|
    /// latest: false:   -a--b------d-|
    /// ```
    ///
    /// - On completion, a value still held is sent at once, then `completed`.
    /// - On an error, a held value is dropped and the error is sent at once.
    /// - Cancelling cancels (and releases) the running interval's timer.
    ///
    /// - Parameters:
    ///   - interval: The shortest time between two values sent; zero or more.
    ///   - scheduler: The clock, and where the held values are sent from.
    ///   - latest: Whether the value sent at the end of an interval is the newest one held (`true`, the
    ///     default) or the first.
    /// - Note: What the timer releases is always sent from `scheduler`, also when another thread is
    ///   sending at the moment it fires (the firing waits for the scheduler's next turn rather than for
    ///   that thread), so with `.main` what the timer releases reaches the observer on the main thread.
    public func throttle(for interval: Duration, scheduler: some Scheduler, latest: Bool = true) -> Observable<Value> {
        preconditionNotNegative(interval, "an interval", of: "throttle(for:scheduler:latest:)")
        return timedOperator(scheduler: scheduler) { observer, timer in
            var machine = ThrottleState<Value>(latest: latest)
            return { input in
                switch input {
                case .start:
                    return true
                case .upstream(.next(let value)):
                    if let value = machine.receive(value) {
                        timer.start(after: interval)
                        observer(.next(value))
                    }
                    return true
                case .timer:
                    if let value = machine.intervalEnded() {
                        timer.start(after: interval)
                        observer(.next(value))
                    }
                    return true
                case .upstream(let end):
                    sendEnd(end, held: machine.flush(), to: observer)
                    return false
                }
            }
        }
    }
}

/// The pure logic of `throttle`: whether an interval runs, and the value held for its end.
struct ThrottleState<Value> {
    let latest: Bool
    private var isRunning = false
    private var held: Value?

    init(latest: Bool) {
        self.latest = latest
    }

    /// A value arrived. Returns it when it must be sent now (an interval then starts), or `nil` when it is
    /// held (or dropped) until the running interval ends.
    mutating func receive(_ value: Value) -> Value? {
        guard isRunning else {
            isRunning = true
            return value
        }
        if latest || held == nil { held = value }
        return nil
    }

    /// The running interval ended. Returns the held value to send now (a new interval then starts), or
    /// `nil` when nothing was held (the throttle is idle again).
    mutating func intervalEnded() -> Value? {
        guard let value = flush() else {
            isRunning = false
            return nil
        }
        return value
    }

    /// Takes the held value, if any.
    mutating func flush() -> Value? {
        defer { held = nil }
        return held
    }
}
