/// The logic of one time operator (`throttle`, `debounce`, `delay`, `timeout`, `buffer(timeSpan:)`,
/// the scheduler-taking `retry`), as a state machine: its own state, and three steps that say what to
/// send and what to ask of the operator's one timer. It never sees a thread, a lock or an observer;
/// ``TimedNode`` runs it.
protocol TimedStateMachine {
    associatedtype Input
    associatedtype Output

    /// Whether the steps read ``TimedStep/now`` (the node reads the scheduler's clock only for those).
    static var readsClock: Bool { get }

    /// The subscription starts, before the source is subscribed.
    mutating func start(_ step: inout TimedStep<Output>)

    /// The source sent `event`.
    mutating func receive(_ event: Event<Input>, _ step: inout TimedStep<Output>)

    /// The timer run started with `id` fired (a run replaced by a later one never fires).
    mutating func timerFired(_ id: Int, _ step: inout TimedStep<Output>)
}

extension TimedStateMachine {
    static var readsClock: Bool { false }
    func start(_ step: inout TimedStep<Output>) {}
}

/// What one step of a ``TimedStateMachine`` decided: the events to send, in order, and what the timer
/// (or, for `retry`, the source) must do next. The node acts on it after the step.
struct TimedStep<Output> {
    /// What the node must do after the step, besides sending.
    enum Request {
        case startTimer(after: Duration, id: Int)
        case subscribeAgain
    }

    /// The scheduler's clock when the step began (`.zero` unless the machine ``TimedStateMachine/readsClock``).
    var now: Duration = .zero
    /// The events waiting to be sent from the scheduler, oldest first.
    private(set) var outbox = ConsumingQueue<Event<Output>>()
    /// Whether a terminal event was queued; the node then takes no more input.
    private(set) var hasEnded = false
    /// The request of the current step; a step that ends the stream drops it.
    private(set) var request: Request?

    /// Queues `value` to be sent.
    mutating func send(_ value: Output) {
        outbox.append(.next(value))
    }

    /// Queues the terminal `event` (`completed` or an error) to be sent; nothing may follow it.
    mutating func end(_ event: Event<Output>) {
        outbox.append(event)
        hasEnded = true
    }

    /// Queues `event`, a value or the terminal event.
    mutating func pass(_ event: Event<Output>) {
        if event.isTerminal { end(event) } else { outbox.append(event) }
    }

    /// Starts the timer to fire `timerFired(id)` after `delay`, replacing the run in progress.
    mutating func startTimer(after delay: Duration, id: Int = 0) {
        request = .startTimer(after: delay, id: id)
    }

    /// Subscribes to the source again (the current subscription is cancelled first).
    mutating func subscribeAgain() {
        request = .subscribeAgain
    }

    // For the node.

    /// Takes the request of the step just taken.
    mutating func takeRequest() -> Request? {
        request.take()
    }

    /// Takes the oldest event waiting to be sent.
    mutating func takeEvent() -> Event<Output>? {
        outbox.popFirst()
    }

    /// Drops every event waiting to be sent (the subscription was cancelled).
    mutating func dropEvents() {
        outbox = ConsumingQueue()
    }
}

extension ObservableType {
    /// Builds a time operator from `machine`: one ``TimedNode`` per subscription, with its own copy of
    /// the machine.
    func timedOperator<Machine: TimedStateMachine>(
        scheduler: some Scheduler, _ machine: Machine
    ) -> Observable<Machine.Output> where Machine.Input == Value {
        let source = asObservable()
        return Observable { observer in
            let node = TimedNode(machine: machine, source: source, scheduler: scheduler, observer: observer)
            node.start()
            return Subscription(node)
        }
    }
}

/// Queues the terminal `end` of an operator that holds back a value (`debounce`, `throttle`): on
/// completion the `held` value goes first; on an error it is dropped.
func sendEnd<Output>(_ end: Event<Output>, held: Output?, into step: inout TimedStep<Output>) {
    if case .completed = end, let held { step.send(held) }
    step.end(end)
}
