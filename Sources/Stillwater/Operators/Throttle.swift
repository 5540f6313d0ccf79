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
    /// - On completion, a value still held is sent, then `completed`.
    /// - On an error, a held value is dropped and the error is sent.
    /// - Every event is sent from `scheduler`, the first value of an interval too (Combine's rule): with
    ///   `.main`, values sent from a background thread reach the observer on the main thread. A value that
    ///   goes out at once is handed to the scheduler at once, so it waits for the scheduler's next turn,
    ///   not for the interval. Events reach the observer one at a time, in order, even on a concurrent
    ///   queue.
    /// - Cancelling drops the events not yet sent and cancels (and releases) the interval's timer.
    ///
    /// - Complexity: O(1) per value. A subscription allocates its state once; then one scheduled delivery
    ///   per burst of values that go out, and one timer run per interval.
    ///
    /// - Parameters:
    ///   - interval: The shortest time between two values sent; zero or more.
    ///   - scheduler: The clock, and where every event is sent from.
    ///   - latest: Whether the value sent at the end of an interval is the newest one held (`true`, the
    ///     default) or the first.
    public func throttle(for interval: Duration, scheduler: some Scheduler, latest: Bool = true) -> Observable<Value> {
        preconditionNotNegative(interval, "an interval", of: "throttle(for:scheduler:latest:)")
        return timedOperator(scheduler: scheduler, ThrottleState<Value>(latest: latest, interval: interval))
    }
}

/// The state machine of `throttle`: idle, or an interval running with the value held for its end.
struct ThrottleState<Value>: TimedStateMachine {
    enum Phase {
        /// No interval runs: the next value is sent at once and starts one.
        case idle
        /// An interval runs; `held` is sent when it ends.
        case running(held: Value?)
    }

    let latest: Bool
    let interval: Duration
    private var phase = Phase.idle

    init(latest: Bool, interval: Duration = .zero) {
        self.latest = latest
        self.interval = interval
    }

    /// A value arrived. Returns it when it must be sent now (an interval then starts), or `nil` when it is
    /// held (or dropped) until the running interval ends.
    mutating func receive(_ value: Value) -> Value? {
        switch phase {
        case .idle:
            phase = .running(held: nil)
            return value
        case .running(let held):
            if latest || held == nil { phase = .running(held: value) }
            return nil
        }
    }

    /// The running interval ended. Returns the held value to send now (a new interval then starts), or
    /// `nil` when nothing was held (the throttle is idle again).
    mutating func intervalEnded() -> Value? {
        guard let value = flush() else {
            phase = .idle
            return nil
        }
        return value
    }

    /// Takes the held value, if any; the interval keeps running.
    mutating func flush() -> Value? {
        guard case .running(let held?) = phase else { return nil }
        phase = .running(held: nil)
        return held
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        switch event {
        case .next(let value):
            guard let value = receive(value) else { return }
            step.send(value)
            step.startTimer(after: interval)
        case .completed, .error:
            sendEnd(event, held: flush(), into: &step)
        }
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {
        guard let value = intervalEnded() else { return }
        step.send(value)
        step.startTimer(after: interval)
    }
}
