extension ObservableType {
    /// Fails with ``TimeoutError`` when `interval` passes without an event: from the subscription to the
    /// first value, and between two values.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let reply = PublishSubject<String>()
    /// let subscription = reply
    ///     .timeout(.seconds(5), scheduler: scheduler)
    ///     .subscribe(onNext: { print($0) }, onError: { print($0) })
    /// scheduler.advance(by: .seconds(5))
    /// // no reply came within 5 seconds:
    /// // Prints "timed out after 5.0 seconds"
    /// ```
    ///
    /// In marbles (one frame per character, `interval` of 3 frames):
    /// ```
    /// source:   -a-b------c|
    /// timeout:  -a-b--#
    /// ```
    ///
    /// On a timeout, the subscription to this stream is cancelled. Values and the stream's own
    /// completion or error pass through unchanged, and a terminal event stops the clock. Cancelling cancels
    /// (and releases) the timer.
    ///
    /// Every event, the values passed through too, is sent from `scheduler` (Combine's rule), one at a
    /// time and in order: a value is handed to the scheduler as soon as it arrives.
    ///
    /// - Note: An ``ImmediateScheduler`` ignores delays, so on it the timeout fires at once, before any
    ///   value can arrive.
    ///
    /// - Complexity: O(1) per value (each value restarts the one timer). A subscription allocates its
    ///   state once; one scheduled delivery per burst of values.
    ///
    /// - Parameters:
    ///   - interval: The longest wait allowed for the next event; zero or more.
    ///   - scheduler: The clock, and where every event is sent from.
    public func timeout(_ interval: Duration, scheduler: some Scheduler) -> Observable<Value> {
        preconditionNotNegative(interval, "an interval", of: "timeout(_:scheduler:)")
        return timedOperator(scheduler: scheduler, TimeoutMachine<Value>(interval: interval))
    }
}

/// The error ``ObservableType/timeout(_:scheduler:)`` fails with.
public struct TimeoutError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The wait that was exceeded.
    public let interval: Duration

    /// An error for a wait of `interval`.
    public init(interval: Duration) {
        self.interval = interval
    }

    /// "timed out after …".
    public var description: String { "timed out after \(interval)" }
}

/// The clock of `timeout`: which timer run is the current wait.
struct TimeoutState {
    private var generation = 0

    /// Starts a new wait and returns the number of its timer run.
    mutating func restart() -> Int {
        generation += 1
        return generation
    }

    /// Whether timer run `id` is the current wait (older runs fired too late to count).
    func isCurrent(_ id: Int) -> Bool {
        id == generation
    }
}

/// The state machine of `timeout`: waiting for the next event, whose deadline is timer run
/// `wait`'s current one.
struct TimeoutMachine<Value>: TimedStateMachine {
    let interval: Duration
    private var wait = TimeoutState()

    init(interval: Duration) {
        self.interval = interval
    }

    mutating func start(_ step: inout TimedStep<Value>) {
        step.startTimer(after: interval, id: wait.restart())
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        step.pass(event)
        if case .next = event { step.startTimer(after: interval, id: wait.restart()) }
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {
        guard wait.isCurrent(id) else { return }
        step.end(.error(TimeoutError(interval: interval)))
    }
}
