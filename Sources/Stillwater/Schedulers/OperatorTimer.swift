/// What reaches the serializer of a time operator: its start, an upstream event, or the firing of one of
/// its timers.
enum TimedInput<Value> {
    case start
    case upstream(Event<Value>)
    case timer(Int)
}

/// The one timer of a time operator, started by its serializer. Starting it again replaces
/// (and cancels) the previous run; each run reports its number, so a stale firing can be told apart.
final class OperatorTimer<Value, S: Scheduler>: Sendable {
    let scheduler: S
    private let route: WeakSerializer<TimedInput<Value>>
    private let slot = SubscriptionSlot()

    init(scheduler: S, route: WeakSerializer<TimedInput<Value>>) {
        self.scheduler = scheduler
        self.route = route
    }

    /// The scheduler's clock.
    var now: Duration { scheduler.now }

    /// Starts a run that fires `.timer(id)` after `delay`, cancelling the run in progress.
    func start(after delay: Duration, id: Int = 0) {
        let route = self.route
        slot.replace(with: Subscription(scheduler.schedule(after: delay) { route.submit(.timer(id)) }))
    }

    /// Cancels the run in progress and every later one.
    func cancel() {
        slot.cancel()
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
