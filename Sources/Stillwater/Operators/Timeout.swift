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
    /// - Note: An ``ImmediateScheduler`` ignores delays, so on it the timeout fires at once, before any
    ///   value can arrive.
    ///
    /// - Parameters:
    ///   - interval: The longest wait allowed for the next event; zero or more.
    ///   - scheduler: The clock, and where the ``TimeoutError`` is sent from.
    /// - Note: What the timer releases is always sent from `scheduler`, also when another thread is
    ///   sending at the moment it fires (the firing waits for the scheduler's next turn rather than for
    ///   that thread), so with `.main` what the timer releases reaches the observer on the main thread.
    public func timeout(_ interval: Duration, scheduler: some Scheduler) -> Observable<Value> {
        preconditionNotNegative(interval, "an interval", of: "timeout(_:scheduler:)")
        return timedOperator(scheduler: scheduler) { observer, timer in
            var machine = TimeoutState()
            return { input in
                switch input {
                case .start:
                    timer.start(after: interval, id: machine.restart())
                    return true
                case .upstream(.next(let value)):
                    timer.start(after: interval, id: machine.restart())
                    observer(.next(value))
                    return true
                case .upstream(let event):
                    observer(event)
                    return false
                case .timer(let id):
                    guard machine.isCurrent(id) else { return true }
                    observer(.error(TimeoutError(interval: interval)))
                    return false
                }
            }
        }
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

/// The pure logic of `timeout`: which timer run is the current one.
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
