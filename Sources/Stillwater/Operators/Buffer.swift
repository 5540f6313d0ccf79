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
    /// As in RxSwift:
    /// - A `timeSpan` that passes sends the array it collected, empty when no value arrived, so the
    ///   observer hears from the operator at least every `timeSpan`.
    /// - When the stream completes, the array collected so far is sent if it holds any value, then the
    ///   completion. A failure drops it and passes through.
    ///
    /// - Parameters:
    ///   - timeSpan: The longest time an array collects; more than zero.
    ///   - count: The most values an array holds; 1 or more.
    ///   - scheduler: The clock, and where the arrays a `timeSpan` ends are sent from.
    /// - Note: An array sent because it is full goes out on the thread that sent its last value; one a
    ///   `timeSpan` ends goes out from `scheduler`, as with the other time operators.
    public func buffer(timeSpan: Duration, count: Int, scheduler: some Scheduler) -> Observable<[Value]> {
        precondition(timeSpan > .zero, "buffer(timeSpan:count:scheduler:) needs a timeSpan of more than zero, got \(timeSpan).")
        precondition(count > 0, "buffer(timeSpan:count:scheduler:) needs a count of 1 or more, got \(count).")
        return timedOperator(scheduler: scheduler) { observer, timer in
            var filling = BufferFill<Value>(count: count)
            var window = 0
            func startWindow() {
                window += 1
                timer.start(after: timeSpan, id: window)
            }
            return { input in
                switch input {
                case .start:
                    startWindow()
                    return true
                case .upstream(.next(let value)):
                    if let full = filling.add(value) {
                        startWindow()
                        observer(.next(full))
                    }
                    return true
                case .timer(let id):
                    guard id == window else { return true }
                    startWindow()
                    observer(.next(filling.takeAll()))
                    return true
                case .upstream(.completed):
                    let rest = filling.takeAll()
                    if !rest.isEmpty { observer(.next(rest)) }
                    observer(.completed)
                    return false
                case .upstream(.error(let error)):
                    observer(.error(error))
                    return false
                }
            }
        }
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
