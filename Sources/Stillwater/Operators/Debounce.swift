extension ObservableType {
    /// Sends a value only once `dueTime` has passed without a newer one: each value restarts the wait.
    ///
    /// The classic use is a search field: query only when the user paused typing.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let typed = PublishSubject<String>()
    /// let subscription = typed
    ///     .debounce(for: .milliseconds(300), scheduler: scheduler)
    ///     .observe { print("search \($0)") }
    /// typed.send("s"); typed.send("sw"); typed.send("swift")
    /// scheduler.advance(by: .milliseconds(300))
    /// // 300 ms after the last keystroke:
    /// // Prints "search swift"
    /// ```
    ///
    /// In marbles (one frame per character, `dueTime` of 3 frames; `(d|)` means both at frame 11):
    /// ```
    /// source:   -a-bc----d-|
    /// debounce: -------c---(d|)
    /// ```
    ///
    /// - On completion, a value still waiting is sent, then `completed`.
    /// - On an error, a waiting value is dropped and the error is sent.
    /// - Every event is sent from `scheduler`, the completion and the error too (Combine's rule): with
    ///   `.main`, the observer is called on the main thread whichever thread the values came from.
    /// - Cancelling drops what waits and cancels (and releases) the pending timer.
    ///
    /// - Complexity: O(1) per value (each value restarts the one timer). A subscription allocates its
    ///   state once.
    ///
    /// - Parameters:
    ///   - dueTime: How long a value must stay the newest before it is sent; zero or more. With zero, a
    ///     value goes out on the scheduler's next turn unless a newer one arrived first.
    ///   - scheduler: The clock, and where every event is sent from.
    public func debounce(for dueTime: Duration, scheduler: some Scheduler) -> Observable<Value> {
        preconditionNotNegative(dueTime, "a dueTime", of: "debounce(for:scheduler:)")
        return timedOperator(scheduler: scheduler, DebounceState<Value>(dueTime: dueTime))
    }
}

/// The state machine of `debounce`: idle, or a value waiting for its timer.
struct DebounceState<Value>: TimedStateMachine {
    enum Phase {
        case idle
        /// `value` waits for timer run `generation`; only that run may send it.
        case waiting(Value, generation: Int)
    }

    let dueTime: Duration
    private var phase = Phase.idle
    private var generation = 0

    init(dueTime: Duration = .zero) {
        self.dueTime = dueTime
    }

    /// Holds `value` in place of the one waiting, and returns the number of the timer that may send it.
    mutating func hold(_ value: Value) -> Int {
        generation += 1
        phase = .waiting(value, generation: generation)
        return generation
    }

    /// Timer `id` fired: the waiting value if that timer is the current one, else `nil`.
    mutating func fire(_ id: Int) -> Value? {
        guard case .waiting(_, id) = phase else { return nil }
        return flush()
    }

    /// Takes the waiting value, if any.
    mutating func flush() -> Value? {
        guard case .waiting(let value, _) = phase else { return nil }
        phase = .idle
        return value
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        switch event {
        case .next(let value):
            step.startTimer(after: dueTime, id: hold(value))
        case .completed, .error:
            sendEnd(event, held: flush(), into: &step)
        }
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {
        if let value = fire(id) { step.send(value) }
    }
}
