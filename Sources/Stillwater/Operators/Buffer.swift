extension ObservableType {
    /// Collects values into arrays of `count` and sends each one as it fills; when the stream completes,
    /// sends the last, shorter array (if it holds any value), then completes.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.buffer(count: 2).observe { print($0) }
    /// for value in 1...5 { subject.send(value) }
    /// subject.complete()
    /// // Prints "[1, 2]", "[3, 4]", "[5]"
    /// ```
    ///
    /// A failure passes through, and the values not yet sent are dropped (as Combine's `collect(_:)`
    /// does).
    ///
    /// - Parameter count: The size of each array; 1 or more.
    /// - Complexity: One array per `count` values.
    public func buffer(count: Int) -> Observable<[Value]> {
        precondition(count > 0, "buffer(count:) needs a count of 1 or more, got \(count).")
        return Observable<[Value]>.recipe({ observer in
            let filling = DelivererBox(BufferFill<Value>(count: count))
            let next = observer.next
            let end = observer.end
            return self.subscribe(Observer(
                next: { value in
                    if let full = filling.value.add(value) { next(full) }
                },
                end: { termination in
                    let rest = filling.value.takeAll()
                    if case .completed = termination, !rest.isEmpty { next(rest) }
                    end(termination)
                },
                early: observer.early
            ))
        })
    }

    /// Collects values into arrays and sends one every `timeSpan`, or as soon as `count` values arrived,
    /// whichever comes first; each array sent starts a new `timeSpan`.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()       // from StillwaterTesting; an app passes .main
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject
    ///     .buffer(timeSpan: .seconds(1), count: 3, scheduler: scheduler)
    ///     .observe { print($0) }
    /// for value in 1...4 { subject.send(value) }
    /// scheduler.advance(by: .seconds(1))
    /// scheduler.advance(by: .seconds(1))
    /// // Prints "[1, 2, 3]", "[4]", "[]"
    /// ```
    ///
    /// - A `timeSpan` that passes sends the array it collected, empty when no value arrived, so the
    ///   observer hears from the operator at least every `timeSpan` (as in RxSwift).
    /// - When the stream completes, the array collected so far is sent if it holds any value, then the
    ///   completion. RxSwift sends that last array even when it is empty; here an empty one is not sent
    ///   (as for ``buffer(count:)``). A failure drops it and passes through.
    /// - Every array, a full one too, and the completion or failure, is sent from `scheduler` (Combine's
    ///   rule), one at a time and in order: a full array is handed to the scheduler as soon as its last
    ///   value arrives. (RxSwift sends a full array on the thread that sent its last value.)
    ///
    /// - Complexity: O(1) amortised per value; one array allocated per array sent, and one timer run per
    ///   `timeSpan`. A subscription allocates its state once.
    ///
    /// - Parameters:
    ///   - timeSpan: The longest time an array collects; more than zero.
    ///   - count: The most values an array holds; 1 or more.
    ///   - scheduler: The clock, and where every event is sent from.
    public func buffer(timeSpan: Duration, count: Int, scheduler: some Scheduler) -> Observable<[Value]> {
        precondition(timeSpan > .zero, "buffer(timeSpan:count:scheduler:) needs a timeSpan of more than zero, got \(timeSpan).")
        precondition(count > 0, "buffer(timeSpan:count:scheduler:) needs a count of 1 or more, got \(count).")
        return timedOperator(scheduler: scheduler, TimedBuffer<Value>(timeSpan: timeSpan, count: count))
    }
}

/// The state machine of `buffer(timeSpan:count:scheduler:)`: the array filling in the current
/// `timeSpan`; each array sent starts the next one (and its timer run).
struct TimedBuffer<Value>: TimedStateMachine {
    let timeSpan: Duration
    private var filling: BufferFill<Value>

    init(timeSpan: Duration, count: Int) {
        self.timeSpan = timeSpan
        filling = BufferFill(count: count)
    }

    func start(_ step: inout TimedStep<[Value]>) {
        step.startTimer(after: timeSpan)
    }

    mutating func receive(_ event: Event<Value>, _ step: inout TimedStep<[Value]>) {
        switch event {
        case .next(let value):
            guard let full = filling.add(value) else { return }
            step.send(full)
            step.startTimer(after: timeSpan)
        case .completed:
            let rest = filling.takeAll()
            if !rest.isEmpty { step.send(rest) }
            step.end(.completed)
        case .error(let error):
            step.end(.error(error))
        }
    }

    mutating func timerFired(_ id: Int, _ step: inout TimedStep<[Value]>) {
        step.send(filling.takeAll())
        step.startTimer(after: timeSpan)
    }
}

/// The array a `buffer` operator is filling, up to its count.
struct BufferFill<Value> {
    let count: Int
    private var values: [Value] = []

    init(count: Int) {
        self.count = count
    }

    /// Adds `value`; returns the array once it holds `count` values, and starts a new one.
    mutating func add(_ value: Value) -> [Value]? {
        if values.isEmpty { values.reserveCapacity(count) }
        values.append(value)
        return values.count == count ? takeAll() : nil
    }

    /// Takes the values collected so far, and starts a new array.
    mutating func takeAll() -> [Value] {
        defer { values = [] }
        return values
    }
}

extension InfallibleType {
    /// `buffer(count:)` that keeps the fact that the stream never fails.
    public func buffer(count: Int) -> Infallible<[Value]> {
        Infallible<[Value]>(never: asObservable().buffer(count: count))
    }
}
