import Stillwater

/// A source built from a marble diagram by ``TestScheduler/hot(_:values:error:)`` or
/// ``TestScheduler/cold(_:values:error:)``, which also records when it was subscribed and cancelled.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let source = scheduler.cold("-a-b|")
/// let recorder = Recorder(source.take(1), scheduler: scheduler)
/// scheduler.run()
/// print(source.subscriptions)
/// // take(1) cancelled its subscription after the first value:
/// // Prints "[0 ms ..< 1 ms]"
/// ```
public final class TestSource<Value>: ObservableType {
    /// When one subscription to a ``TestSource`` began, and when its subscriber cancelled it.
    public struct Period: Equatable, Sendable, CustomStringConvertible {
        /// The virtual time of the subscription.
        public var subscribed: Duration
        /// The virtual time the subscriber cancelled (or released) it; `nil` while it lasts, and when the
        /// subscriber kept it after the source ended.
        public var cancelled: Duration?

        /// A period from `subscribed` to `cancelled`.
        public init(subscribed: Duration, cancelled: Duration? = nil) {
            self.subscribed = subscribed
            self.cancelled = cancelled
        }

        /// `0 ms ..< 300 ms`, or `0 ms ...` while it lasts.
        public var description: String {
            let start = Marbles.describe(subscribed)
            guard let cancelled else { return "\(start) ..." }
            return "\(start) ..< \(Marbles.describe(cancelled))"
        }
    }

    private let scheduler: TestScheduler
    /// What a subscriber connects to: the diagram's subject (hot) or its recipe (cold).
    private let events: Observable<Value>
    private let periods = Lock<[Period]>([])

    init(scheduler: TestScheduler, events: Observable<Value>) {
        self.scheduler = scheduler
        self.events = events
    }

    /// Every subscription so far, in order.
    public var subscriptions: [Period] {
        periods.withLock { $0 }
    }

    /// Connects `observer`: a hot source sends what its diagram has left from now on, a cold source starts
    /// its diagram now.
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        let now = scheduler.now
        let index = periods.withLock { periods in
            periods.append(Period(subscribed: now))
            return periods.count - 1
        }
        let inner = events.subscribe(observer)
        return Subscription { [self] in
            let now = scheduler.now
            periods.withLock { $0[index].cancelled = now }
            inner.cancel()
        }
    }
}

extension TestScheduler {
    /// A hot source that sends the events of `marbles` at their times, whether anyone listens or not.
    ///
    /// Frame 0 is now, or the `^` in the diagram: events before the `^` are in the past and never sent.
    /// An observer receives the events due after it subscribed.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()
    /// let clicks = scheduler.hot("-a--b-|", values: ["a": 1, "b": 2])
    /// let recorder = Recorder(clicks, scheduler: scheduler)
    /// scheduler.run()
    /// print(recorder.timeline)
    /// // Prints "[next(1) at 1 ms, next(2) at 4 ms, completed at 6 ms]"
    /// ```
    ///
    /// - Parameters:
    ///   - marbles: The diagram; see ``Recorder/expect(_:values:error:sourceLocation:)`` for the notation.
    ///   - values: The value of each value character.
    ///   - error: The error `#` sends.
    public func hot<Value>(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError()
    ) -> TestSource<Value> {
        let subject = PublishSubject<Value>()
        for entry in Marbles.parse(marbles, values: values, error: error, allowsStartMarker: true)
        where entry.frame >= 0 {
            schedule(after: frame * entry.frame) {
                switch entry.event {
                case .next(let value): subject.send(value)
                case .completed: subject.complete()
                case .error(let error): subject.fail(error)
                }
            }
        }
        return TestSource(scheduler: self, events: subject.asObservable())
    }

    /// A cold source: each subscription receives the events of `marbles` at their times, counted from the
    /// moment it subscribed.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()
    /// let reply = scheduler.cold("--a|", values: ["a": "pong"])
    /// scheduler.advance(by: .milliseconds(5))
    /// let recorder = Recorder(reply, scheduler: scheduler)
    /// scheduler.run()
    /// print(recorder.timeline)
    /// // Prints "[next(pong) at 7 ms, completed at 8 ms]"
    /// ```
    ///
    /// Cancelling a subscription cancels (and releases) the events it had left.
    ///
    /// - Parameters:
    ///   - marbles: The diagram (no `^`); see ``Recorder/expect(_:values:error:sourceLocation:)``.
    ///   - values: The value of each value character.
    ///   - error: The error `#` sends.
    public func cold<Value>(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError()
    ) -> TestSource<Value> {
        let entries = Marbles.parse(marbles, values: values, error: error, allowsStartMarker: false)
        let source = Observable<Value>.create { [self] emitter in
            let scheduled = entries.map { entry in
                schedule(after: frame * entry.frame) {
                    switch entry.event {
                    case .next(let value): emitter.send(value)
                    case .completed: emitter.complete()
                    case .error(let error): emitter.fail(error)
                    }
                }
            }
            return Subscription { for work in scheduled { work.cancel() } }
        }
        return TestSource(scheduler: self, events: source)
    }

    /// A hot source whose values are the characters of `marbles` themselves: `hot("-a-b|")` sends "a"
    /// then "b".
    public func hot(_ marbles: String, error: any Error = MarbleError()) -> TestSource<String> {
        hot(marbles, values: Marbles.selfNamed(marbles), error: error)
    }

    /// A cold source whose values are the characters of `marbles` themselves: `cold("-a-b|")` sends "a"
    /// then "b".
    public func cold(_ marbles: String, error: any Error = MarbleError()) -> TestSource<String> {
        cold(marbles, values: Marbles.selfNamed(marbles), error: error)
    }

    /// The events of `marbles` at their times (frame 0 at `.zero`), to compare with a
    /// ``Recorder/timeline`` or to build expectations by hand.
    public func timeline<Value>(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError()
    ) -> [Recorded<Value>] {
        Marbles.timeline(marbles, values: values, error: error, frame: frame)
    }
}

extension Marbles {
    /// The value table in which every value character of `diagram` stands for itself.
    static func selfNamed(_ diagram: String) -> [Character: String] {
        var table: [Character: String] = [:]
        for character in diagram where !"-^()|# \t\n".contains(character) {
            table[character] = String(character)
        }
        return table
    }
}

extension TestSource: Sendable where Value: Sendable {}
