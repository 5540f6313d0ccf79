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
    /// - On completion, a value still waiting is sent at once, then `completed`.
    /// - On an error, a waiting value is dropped and the error is sent at once.
    /// - Cancelling cancels (and releases) the pending timer.
    ///
    /// - Parameters:
    ///   - dueTime: How long a value must stay the newest before it is sent; zero or more. With zero, a
    ///     value goes out on the scheduler's next turn unless a newer one arrived first.
    ///   - scheduler: The clock, and where the waiting values are sent from.
    /// - Note: What the timer releases is always sent from `scheduler`, also when another thread is
    ///   sending at the moment it fires (the firing waits for the scheduler's next turn rather than for
    ///   that thread), so with `.main` what the timer releases reaches the observer on the main thread.
    public func debounce(for dueTime: Duration, scheduler: some Scheduler) -> Observable<Value> {
        preconditionNotNegative(dueTime, "a dueTime", of: "debounce(for:scheduler:)")
        return timedOperator(scheduler: scheduler) { observer, timer in
            var machine = DebounceState<Value>()
            return { input in
                switch input {
                case .start:
                    return true
                case .upstream(.next(let value)):
                    timer.start(after: dueTime, id: machine.hold(value))
                    return true
                case .timer(let id):
                    if let value = machine.fire(id) { observer(.next(value)) }
                    return true
                case .upstream(let end):
                    sendEnd(end, held: machine.flush(), to: observer)
                    return false
                }
            }
        }
    }
}

/// The pure logic of `debounce`: the value that waits, and which timer may send it.
struct DebounceState<Value> {
    private var waiting: Value?
    private var generation = 0

    /// Holds `value` in place of the one waiting, and returns the number of the timer that may send it.
    mutating func hold(_ value: Value) -> Int {
        waiting = value
        generation += 1
        return generation
    }

    /// Timer `id` fired: the waiting value if that timer is the current one, else `nil`.
    mutating func fire(_ id: Int) -> Value? {
        guard id == generation else { return nil }
        return flush()
    }

    /// Takes the waiting value, if any.
    mutating func flush() -> Value? {
        defer { waiting = nil }
        return waiting
    }
}
