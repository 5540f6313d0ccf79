import Synchronization

/// What reaches the serializer of a time operator: its start, an upstream event, or the firing of one of
/// its timers.
enum TimedInput<Value> {
    case start
    case upstream(Event<Value>)
    case timer(Int)
}

/// The one timer of a time operator, started by its serializer. Starting it again replaces
/// (and cancels) the previous run; each run reports its number, so a stale firing can be told apart.
///
/// A firing runs the operator on the scheduler, so what the operator sends because of it (a debounced
/// value, a throttled one, a delayed event, a timeout) is sent from the scheduler, as the operators
/// document: with `.main`, never off the main thread. When another thread is running the operator at that
/// moment (a sender), the firing is not queued behind it, which would have the sender's thread deliver
/// it; it is tried again on each of the scheduler's turns until that thread lets the operator go (so on a
/// `TestScheduler`, a thread that holds the operator for long keeps the clock's work going).
/// When the firing thread itself is running the operator further up its stack (a scheduler that runs
/// work at once, or an observer that drives a test scheduler), the firing is queued behind the current
/// work, on this same thread. Only the newest retry is kept: a firing supersedes the ones before it, as
/// starting the timer again does.
final class OperatorTimer<Value, S: Scheduler>: Sendable {
    /// The newest retry, by number, so a retry stored late never replaces a newer one.
    private struct Retries {
        var newest: UInt64 = 0
        var pending: Subscription?
        var isCancelled = false
    }

    let scheduler: S
    private let route: WeakSerializer<TimedInput<Value>>
    private let slot = SubscriptionSlot()
    private let retries = Lock(Retries())
    private let numbers = Atomic<UInt64>(0)
    /// The thread running the operator's step right now, or 0 (set by `timedOperator` around each step).
    let runner = Atomic<UInt>(0)

    init(scheduler: S, route: WeakSerializer<TimedInput<Value>>) {
        self.scheduler = scheduler
        self.route = route
    }

    /// The scheduler's clock.
    var now: Duration { scheduler.now }

    /// Starts a run that fires `.timer(id)` after `delay`, cancelling the run in progress.
    func start(after delay: Duration, id: Int = 0) {
        slot.replace(with: Subscription(scheduler.schedule(after: delay) { [weak self] in self?.fire(id) }))
    }

    /// Runs the operator's `.timer(id)` step on this thread, the scheduler's; see the type's note.
    private func fire(_ id: Int) {
        guard let serializer = route.target, !serializer.tryRun(.timer(id)) else { return }
        guard runner.load(ordering: .relaxed) != currentThread() else {
            route.submit(.timer(id))
            return
        }
        let number = numbers.add(1, ordering: .relaxed).newValue
        let again = scheduler.schedule(after: .zero) { [weak self] in self?.fire(id) }
        let replaced: Subscription? = retries.withLock { retries in
            if retries.isCancelled { return Subscription(again) }
            guard number > retries.newest else { return nil }
            retries.newest = number
            defer { retries.pending = Subscription(again) }
            return retries.pending
        }
        replaced?.cancel()
    }

    /// Cancels the run in progress and every later one.
    func cancel() {
        slot.cancel()
        let pending = retries.withLock { retries -> Subscription? in
            retries.isCancelled = true
            defer { retries.pending = nil }
            return retries.pending
        }
        pending?.cancel()
    }
}

extension ObservableType {
    /// Builds a time operator. Every input (the start, each upstream event, each timer firing) goes
    /// through one serializer, so the operator's state is touched by one thread at a time and its observer
    /// receives one event at a time, whichever threads the stream and the scheduler use.
    ///
    /// `makeHandler` runs once per subscription with the observer and the timer, and returns the function
    /// that handles each input; it returns `false` after sending a terminal event, which cancels the timer
    /// and the subscription to this stream.
    func timedOperator<Output, S: Scheduler>(
        scheduler: S,
        _ makeHandler: @escaping (
            _ observer: @escaping (Event<Output>) -> Void, _ timer: OperatorTimer<Value, S>
        ) -> (TimedInput<Value>) -> Bool
    ) -> Observable<Output> {
        Observable { observer in
            let upstream = SubscriptionSlot()
            let route = WeakSerializer<TimedInput<Value>>()
            let timer = OperatorTimer(scheduler: scheduler, route: route)
            let handle = makeHandler(observer, timer)
            let serializer = Serializer<TimedInput<Value>> { input in
                // Marks this thread as the one running the operator, for a firing made under this step.
                timer.runner.store(currentThread(), ordering: .relaxed)
                defer { timer.runner.store(0, ordering: .relaxed) }
                guard handle(input) else {
                    timer.cancel()
                    upstream.cancel()
                    return false
                }
                return true
            }
            route.target = serializer
            serializer.submit(.start)
            // An operator that already ended at its start (a timeout on an immediate scheduler) does not
            // subscribe at all.
            if !upstream.isCancelled {
                upstream.replace(with: self.subscribe { serializer.submit(.upstream($0)) })
            }
            return Subscription {
                upstream.cancel()
                timer.cancel()
                serializer.cancel()
            }
        }
    }
}

/// Sends the terminal `end` of an operator that holds back a value (`debounce`, `throttle`): on
/// completion the `held` value goes out first; on an error it is dropped.
func sendEnd<Value>(_ end: Event<Value>, held: Value?, to observer: (Event<Value>) -> Void) {
    if case .completed = end, let held { observer(.next(held)) }
    observer(end)
}
