import Stillwater

/// Records every event a stream sends, for assertions in tests; with a ``TestScheduler``, also the
/// virtual time of each event, to compare with a marble diagram.
///
/// ```swift
/// let subject = PublishSubject<Int>()
/// let recorder = Recorder(subject)
/// subject.send(1)
/// subject.complete()
/// print(recorder.values, recorder.isCompleted)
/// // Prints "[1] true"
/// ```
///
/// With a scheduler:
///
/// ```swift
/// let scheduler = TestScheduler(frame: .milliseconds(100))
/// let recorder = Recorder(scheduler.cold("-a-b|").delay(for: .milliseconds(200), scheduler: scheduler),
///                         scheduler: scheduler)
/// scheduler.run()
/// recorder.expect("---a-b|")
/// ```
///
/// A recorder stays subscribed until ``cancel()`` or until it is released. It is safe to read from any
/// thread while events arrive.
public final class Recorder<Value: Sendable>: Sendable {
    private let storage: Storage
    private let scheduler: TestScheduler?
    private let subscription: Subscription

    /// Subscribes to `source` and starts recording. Every event's time reads `.zero`.
    public convenience init(_ source: some ObservableType<Value>) {
        self.init(source, clock: nil)
    }

    /// Subscribes to `source` now (at `scheduler.now`) and records each event with the virtual time it
    /// arrived at.
    public convenience init(_ source: some ObservableType<Value>, scheduler: TestScheduler) {
        self.init(source, clock: scheduler)
    }

    private init(_ source: some ObservableType<Value>, clock scheduler: TestScheduler?) {
        let storage = Storage()
        self.storage = storage
        self.scheduler = scheduler
        subscription = source.subscribe { event in
            storage.append(Recorded(time: scheduler?.now ?? .zero, event: event))
        }
    }

    /// Every event recorded so far, with its time, in order.
    public var timeline: [Recorded<Value>] {
        storage.recorded
    }

    /// Every event recorded so far, in order.
    public var events: [Event<Value>] {
        timeline.map(\.event)
    }

    /// The values of the `next` events recorded so far, in order.
    public var values: [Value] {
        events.compactMap(\.value)
    }

    /// Whether a `completed` event was recorded.
    public var isCompleted: Bool {
        events.contains { if case .completed = $0 { return true } else { return false } }
    }

    /// The error of a recorded `error` event, if any.
    public var error: (any Error)? {
        events.lazy.compactMap(\.error).first
    }

    /// Stops recording.
    public func cancel() {
        subscription.cancel()
    }

    /// The scheduler's frame, for the marble methods; stops the program when there is no scheduler.
    func frame(for method: String) -> Duration {
        guard let scheduler else {
            preconditionFailure(
                "Recorder.\(method) needs the recorder's virtual times; create it with Recorder(source, scheduler:).")
        }
        return scheduler.frame
    }
}

extension Recorder {
    private final class Storage: Sendable {
        private let list = Lock<[Recorded<Value>]>([])

        func append(_ entry: Recorded<Value>) {
            list.withLock { $0.append(entry) }
        }

        var recorded: [Recorded<Value>] {
            list.withLock { $0 }
        }
    }
}
