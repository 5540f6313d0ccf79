extension ObservableType {
    /// Subscribes to this stream, and later cancels that subscription, through `scheduler`.
    ///
    /// Use it when subscribing does work that belongs on another queue (opening a file, starting a
    /// sensor). Events are not moved: they arrive on whatever thread this stream sends them from (combine
    /// with ``observe(on:)`` to move them).
    ///
    /// <!-- doc-test: waits for the reading, delivered on the main queue after the last line -->
    /// ```swift
    /// import Dispatch
    ///
    /// let sensor = Observable<Int>.create { emitter in
    ///     emitter.send(21)    // starting the sensor: slow work, done on the background queue
    ///     return .empty
    /// }
    /// let subscription = sensor
    ///     .subscribe(on: .queue(DispatchQueue(label: "sensor")))
    ///     .observe(on: .main)
    ///     .observe { print($0) }
    /// // later, on the main queue:
    /// // Prints "21"
    /// ```
    ///
    /// Cancelling stops delivery at once. If the subscription has not been made yet, the scheduled
    /// subscribe is cancelled and released, and this stream is never subscribed; otherwise the
    /// subscription to this stream is cancelled on the scheduler.
    public func subscribe(on scheduler: some Scheduler) -> Observable<Value> {
        Observable { observer in
            let node = SubscribeOnNode(observer: observer, scheduler: scheduler)
            node.start(self)
            return Subscription(node)
        }
    }
}

/// The node of `subscribe(on:)`: subscribes on the scheduler, forwards events until cancelled, and
/// cancels on the scheduler.
final class SubscribeOnNode<Value, S: Scheduler>: Cancellable {
    private struct State {
        var observer: ((Event<Value>) -> Void)?
        var scheduledSubscribe: (any Cancellable)?
        var upstream: Subscription?
        var isCancelled = false
    }

    private let state: LockedBox<State>
    private let scheduler: S

    init(observer: @escaping (Event<Value>) -> Void, scheduler: S) {
        state = LockedBox(State(observer: observer))
        self.scheduler = scheduler
    }

    func start(_ source: some ObservableType<Value>) {
        let work = scheduler.schedule {
            let subscription = source.subscribe { event in self.forward(event) }
            let cancelled = self.state.withLock { state -> Bool in
                state.scheduledSubscribe = nil
                if state.isCancelled { return true }
                state.upstream = subscription
                return false
            }
            // Cancelled while subscribing: we are on the scheduler already, so end it here.
            if cancelled { subscription.cancel() }
        }
        let cancelled = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            if state.upstream == nil { state.scheduledSubscribe = work }
            return false
        }
        if cancelled { work.cancel() }
    }

    private func forward(_ event: Event<Value>) {
        let observer = state.withLock { state in
            defer { if event.isTerminal { state.observer = nil } }
            return state.observer
        }
        observer?(event)
    }

    func cancel() {
        let (observer, scheduled, upstream) = state.withLock { state in
            defer {
                state.isCancelled = true
                state.observer = nil
                state.scheduledSubscribe = nil
                state.upstream = nil
            }
            return (state.observer, state.scheduledSubscribe, state.upstream)
        }
        scheduled?.cancel()
        if let upstream { scheduler.schedule { upstream.cancel() } }
        withExtendedLifetime(observer) {}     // released here, outside the lock
    }
}
