extension ObservableType {
    /// Sends each value, and the completion, `delay` later than it arrived; an error goes out at once.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let subscription = Observable.of("ping")
    ///     .delay(for: .seconds(1), scheduler: scheduler)
    ///     .observe { print($0) }
    /// print("sent")
    /// scheduler.advance(by: .seconds(1))
    /// // one second later:
    /// // Prints "sent", "ping"
    /// ```
    ///
    /// In marbles (one frame per character, `delay` of 2 frames):
    /// ```
    /// source:  -a-b|
    /// delay:   ---a-b|
    /// ```
    ///
    /// Values keep their order and their spacing. An error is not delayed: it is handed to the scheduler
    /// as soon as it arrives, and the values still waiting are dropped (like RxSwift; a failure should not
    /// wait behind values nobody will use). Every event, the error too, is sent from `scheduler`
    /// (Combine's rule), one at a time and in order, even on a concurrent queue. Cancelling drops the
    /// waiting events and cancels (and releases) the timer.
    ///
    /// - Complexity: O(1) amortised per event, and one timer at a time however many events wait; the
    ///   waiting events are stored in one array. A subscription allocates its state once.
    ///
    /// - Parameters:
    ///   - delay: How much later each event is sent; zero or more.
    ///   - scheduler: The clock, and where every event is sent from.
    public func delay(for delay: Duration, scheduler: some Scheduler) -> Observable<Value> {
        preconditionNotNegative(delay, "a delay", of: "delay(for:scheduler:)")
        return timedOperator(scheduler: scheduler, DelayState<Value>(delay: delay))
    }
}

/// The state machine of `delay`: the events that wait with their due times (none: idle), and when the
/// timer must fire.
///
/// The timer runs exactly while an event waits. (A steady stream that keeps the timer busy does not grow
/// the storage: see ``ConsumingQueue``.)
struct DelayState<Value>: TimedStateMachine {
    static var readsClock: Bool { true }

    let delay: Duration
    private var waiting = ConsumingQueue<(due: Duration, event: Event<Value>)>()

    init(delay: Duration) {
        self.delay = delay
    }

    /// How many events the storage holds, sent ones not yet compacted included (for tests).
    var storedCount: Int { waiting.storedCount }

    /// Queues `event`, which arrived at `now`. Returns how long the timer must wait, when it must be
    /// started; `nil` when it already runs for an earlier event.
    mutating func receive(_ event: Event<Value>, at now: Duration) -> Duration? {
        let timerIsIdle = waiting.isEmpty
        waiting.append((now + delay, event))
        return timerIsIdle ? delay : nil
    }

    /// The timer fired at `now`: the events to send (the first waiting one, whose timer this was, and every
    /// other one due by `now`), and how long to wait for the next one, if any is left.
    mutating func fire(at now: Duration) -> (due: [Event<Value>], wait: Duration?) {
        var due: [Event<Value>] = []
        while let next = waiting.first, due.isEmpty || next.due <= now {
            due.append(next.event)
            _ = waiting.popFirst()
        }
        guard let next = waiting.first else { return (due, nil) }
        return (due, max(.zero, next.due - now))
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        if case .error = event {
            waiting = ConsumingQueue()
            step.end(event)
        } else if let wait = receive(event, at: step.now) {
            step.startTimer(after: wait)
        }
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {
        let (due, wait) = fire(at: step.now)
        for event in due {
            step.pass(event)
            if step.hasEnded { return }
        }
        if let wait { step.startTimer(after: wait) }
    }
}
