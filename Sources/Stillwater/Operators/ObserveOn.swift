extension ObservableType {
    /// Delivers this stream's events through `scheduler`: on its queue, thread or virtual clock.
    ///
    /// Events keep their order and their grammar, and the observer receives one at a time, even on a
    /// concurrent queue: events that arrive while a delivery is pending join a queue that one scheduled
    /// drain empties. Nothing is delivered during `subscribe`, except on an ``ImmediateScheduler``.
    ///
    /// <!-- doc-test: waits for the value, delivered on the main queue after the last line -->
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.observe(on: .main).observe { value in
    ///     print(value)        // runs on the main actor
    /// }
    /// subject.send(1)
    /// // on the next turn of the main queue:
    /// // Prints "1"
    /// ```
    ///
    /// Cancelling drops the events not yet delivered, cancels the scheduled drain (releasing it at once)
    /// and the subscription to this stream.
    ///
    /// - Complexity: One scheduled piece of work per burst of events, not one per event.
    public func observe(on scheduler: some Scheduler) -> Observable<Value> {
        timedOperator(scheduler: scheduler, PassThroughMachine())
    }
}

/// `observe(on:)`'s machine: every event passes on as it comes, and the node sends it from the scheduler
/// (one drain per burst). It never starts a timer.
struct PassThroughMachine<Value>: TimedStateMachine {
    func receive(_ event: Event<Value>, _ step: inout TimedStep<Value>) {
        step.pass(event)
    }

    func timerFired(_ id: Int, _ step: inout TimedStep<Value>) {}
}
