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
        Observable { observer in
            let node = ObserveOnNode(observer: observer, scheduler: scheduler)
            node.upstream.replace(with: self.subscribe { node.receive($0) })
            return Subscription(node)
        }
    }
}

/// The pure logic of `observe(on:)`: which events wait, and whether a drain must be scheduled.
struct ObserveOnState<Value> {
    private var waiting = ConsumingQueue<Event<Value>>()

    /// How many events the storage holds, delivered ones not yet dropped included (for tests).
    var storedCount: Int { waiting.storedCount }
    /// A drain is scheduled or running; events that arrive meanwhile only join `waiting`.
    private(set) var isDraining = false
    /// Numbers the drains, so the storage keeps the cancellable of the current one only.
    private(set) var drain = 0
    private var isStopped = false

    /// Queues `event`. Returns the number of a drain to schedule, or `nil` when one is already on its way
    /// (or the node has stopped).
    mutating func enqueue(_ event: Event<Value>) -> Int? {
        guard !isStopped else { return nil }
        if event.isTerminal { isStopped = true }
        waiting.append(event)
        guard !isDraining else { return nil }
        isDraining = true
        drain += 1
        return drain
    }

    /// The next event to deliver, or `nil`, which ends the current drain. (A drain that never catches up
    /// does not grow the storage: see ``ConsumingQueue``.)
    mutating func next() -> Event<Value>? {
        guard let event = waiting.popFirst() else {
            isDraining = false
            return nil
        }
        return event
    }

    /// Drops every waiting event and refuses new ones.
    mutating func stop() {
        isStopped = true
        waiting = ConsumingQueue()
    }
}

/// The storage of `observe(on:)`: holds the lock, schedules the drains and calls the observer outside
/// the lock.
final class ObserveOnNode<Value, S: Scheduler>: Cancellable, Sendable {
    private struct State {
        var machine = ObserveOnState<Value>()
        var observer: ((Event<Value>) -> Void)?
        var pendingDrain: (any Cancellable)?
    }

    private let state: Lock<State>
    private let scheduler: S
    let upstream = SubscriptionSlot()

    init(observer: @escaping (Event<Value>) -> Void, scheduler: S) {
        state = Lock(State(observer: observer))
        self.scheduler = scheduler
    }

    func receive(_ event: Event<Value>) {
        guard let drain = state.withLock({ $0.machine.enqueue(event) }) else { return }
        let work = scheduler.schedule { self.drain() }
        let cancelled = state.withLock { state -> Bool in
            if state.observer == nil { return true }
            // Keep the cancellable only while that drain may still run; one that already ended (on an
            // immediate scheduler) is spent.
            if state.machine.isDraining, state.machine.drain == drain { state.pendingDrain = work }
            return false
        }
        if cancelled { work.cancel() }
    }

    private func drain() {
        while true {
            let next = state.withLock { state -> (Event<Value>, (Event<Value>) -> Void)? in
                guard let observer = state.observer, let event = state.machine.next() else { return nil }
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

    func cancel() {
        let (observer, drain) = state.withLock { state in
            state.machine.stop()
            defer {
                state.observer = nil
                state.pendingDrain = nil
            }
            return (state.observer, state.pendingDrain)
        }
        drain?.cancel()
        upstream.cancel()
        withExtendedLifetime(observer) {}     // released here, outside the lock
    }
}
