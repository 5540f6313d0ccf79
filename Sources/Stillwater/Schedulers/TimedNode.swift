/// The storage of a time operator: holds its state machine under one lock, starts its timer, and sends
/// every event from the scheduler.
///
/// Every event, a value passed on at once (throttle's first value of an interval, timeout's values, a
/// full buffer) as much as one a timer releases, and the completion or failure too, is queued in the
/// step's outbox and sent by one drain that runs on the scheduler: scheduled as soon as the outbox has
/// something (no waiting for an interval), or run in place when the step was a timer firing, which is
/// already on the scheduler. One drain at a time, so the observer receives one event at a time, in the
/// order the steps queued them, even on a concurrent queue; an event sent upstream from inside the
/// observer joins the outbox and is delivered after the current one, never nested. The observer is never
/// called while the lock is held.
final class TimedNode<Machine: TimedStateMachine, S: Scheduler>: Cancellable {
    private struct State {
        var machine: Machine
        var step = TimedStep<Machine.Output>()
        /// The source, until the stream ends (then released with what it captured).
        var source: Observable<Machine.Input>?
        /// `nil` once the terminal event was delivered or the subscription cancelled.
        var observer: ((Event<Machine.Output>) -> Void)?
        /// No more input: a terminal event is queued, or the subscription was cancelled.
        var isStopped = false
        /// A drain is scheduled or running; events queued meanwhile are sent by it.
        var isDraining = false
        var drainNumber = 0
        var pendingDrain: (any Cancellable)?
        /// The current timer run; a firing of any other is stale. `timerID` is the machine's id for it.
        var timerRun = 0
        var timerID = 0
        var pendingTimer: (any Cancellable)?
        /// The source is being subscribed; a `subscribeAgain` meanwhile waits for that call to return.
        var isSubscribing = false
        var subscribeAgain = false
    }

    /// What a step left for the node to do once the lock is released.
    private struct Plan {
        var cancelTimer: (any Cancellable)?
        var startTimer: (delay: Duration, run: Int)?
        var subscribeAgain = false
        var stop = false
        var drain: Drain = .none
        /// The source, once the stream ended: released after the lock, with what it captured.
        var released: Observable<Machine.Input>?
    }

    private enum Drain {
        case none, inPlace, schedule(Int)
    }

    private let state: LockedBox<State>
    private let scheduler: S
    private let upstream = SubscriptionSlot()

    init(machine: Machine, source: Observable<Machine.Input>, scheduler: S,
         observer: @escaping (Event<Machine.Output>) -> Void) {
        state = LockedBox(State(machine: machine, source: source, observer: observer))
        self.scheduler = scheduler
    }

    /// What reaches the machine: the start, an event of the source, or a firing of timer run `run`.
    private enum Input {
        case start
        case upstream(Event<Machine.Input>)
        case timer(run: Int)
    }

    /// Runs the machine's start, then subscribes to the source unless the start already ended the stream
    /// (a timeout on an immediate scheduler).
    func start() {
        step(.start)
        subscribeSource()
    }

    /// Runs one step of the machine under the lock, then acts on it outside the lock. A timer firing is
    /// on the scheduler already, so the events it queued are sent in place; any other step schedules the
    /// drain.
    private func step(_ input: Input) {
        let now = Machine.readsClock ? scheduler.now : .zero
        let plan = state.withLock { state -> Plan? in
            guard !state.isStopped else { return nil }
            state.step.now = now
            var onScheduler = false
            switch input {
            case .start:
                state.machine.start(&state.step)
            case .upstream(let event):
                state.machine.receive(event, &state.step)
            case .timer(let run):
                guard run == state.timerRun else { return nil }
                state.pendingTimer = nil
                onScheduler = true
                state.machine.timerFired(state.timerID, &state.step)
            }
            return settle(&state, onScheduler: onScheduler)
        }
        guard let plan else { return }
        plan.cancelTimer?.cancel()
        if plan.stop { upstream.cancel() }
        if let (delay, run) = plan.startTimer { startTimer(after: delay, run: run) }
        if plan.subscribeAgain { subscribeSource() }
        switch plan.drain {
        case .none: break
        case .inPlace: drain()
        case .schedule(let number): scheduleDrain(number)
        }
    }

    /// Settles what the step just taken asks for, under the lock.
    private func settle(_ state: inout State, onScheduler: Bool) -> Plan {
        var plan = Plan()
        let request = state.step.takeRequest()
        if state.step.hasEnded {
            state.isStopped = true
            plan.released = state.source.take()
            state.timerRun += 1
            plan.stop = true
            plan.cancelTimer = state.pendingTimer.take()
        } else if let request {
            switch request {
            case .startTimer(let delay, let id):
                state.timerRun += 1
                state.timerID = id
                plan.cancelTimer = state.pendingTimer.take()
                plan.startTimer = (delay, state.timerRun)
            case .subscribeAgain:
                plan.subscribeAgain = true
            }
        }
        if !state.step.outbox.isEmpty, !state.isDraining {
            state.isDraining = true
            if onScheduler {
                plan.drain = .inPlace
            } else {
                state.drainNumber += 1
                plan.drain = .schedule(state.drainNumber)
            }
        }
        return plan
    }

    private func startTimer(after delay: Duration, run: Int) {
        let work = scheduler.schedule(after: delay) { [weak self] in self?.step(.timer(run: run)) }
        // Another step may have replaced this run (or ended the stream) while it was being scheduled.
        let stale = state.withLock { state -> (any Cancellable)? in
            guard state.timerRun == run else { return work }
            defer { state.pendingTimer = work }
            return state.pendingTimer
        }
        stale?.cancel()
    }

    /// Subscribes to the source, and again while a step asked for it during that subscribe (a source
    /// that fails while being subscribed, on a scheduler that runs the retry at once), so retries follow
    /// one another in a loop instead of nesting.
    private func subscribeSource() {
        let source = state.withLock { state -> Observable<Machine.Input>? in
            guard !state.isStopped, let source = state.source else { return nil }
            guard !state.isSubscribing else {
                state.subscribeAgain = true
                return nil
            }
            state.isSubscribing = true
            return source
        }
        guard let source else { return }
        while true {
            upstream.replace(with: source.subscribe { [self] event in step(.upstream(event)) })
            let again = state.withLock { state -> Bool in
                let again = state.subscribeAgain && !state.isStopped
                state.subscribeAgain = false
                state.isSubscribing = again
                return again
            }
            guard again else { return }
        }
    }

    private func scheduleDrain(_ number: Int) {
        let work = scheduler.schedule { [self] in drain() }
        let cancelled = state.withLock { state -> Bool in
            if state.observer == nil { return true }
            // Keep the cancellable only while that drain may still run; one that already ended (on an
            // immediate scheduler) is spent.
            if state.isDraining, state.drainNumber == number { state.pendingDrain = work }
            return false
        }
        if cancelled { work.cancel() }
    }

    /// Sends the queued events one at a time, outside the lock, until none is left.
    private func drain() {
        while true {
            let next = state.withLock { state -> (Event<Machine.Output>, (Event<Machine.Output>) -> Void)? in
                guard let observer = state.observer, let event = state.step.takeEvent() else {
                    state.isDraining = false
                    state.pendingDrain = nil
                    return nil
                }
                if event.isTerminal {
                    state.observer = nil
                    state.pendingDrain = nil
                }
                return (event, observer)
            }
            guard case let (event, observer)? = next else { return }
            observer(event)
        }
    }

    /// Drops the events not yet sent, cancels (and releases) the timer, the scheduled drain and the
    /// subscription to the source.
    func cancel() {
        let (observer, drain, timer, source) = state.withLock { state in
            state.isStopped = true
            state.timerRun += 1
            state.step.dropEvents()
            defer {
                state.observer = nil
                state.pendingDrain = nil
                state.pendingTimer = nil
            }
            return (state.observer, state.pendingDrain, state.pendingTimer, state.source.take())
        }
        drain?.cancel()
        timer?.cancel()
        upstream.cancel()
        withExtendedLifetime((observer, source)) {}     // released here, outside the lock
    }
}
