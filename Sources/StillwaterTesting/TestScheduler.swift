import Stillwater

/// A scheduler on a virtual clock that moves only when the test says so, so pipelines with time
/// (`debounce`, `throttle`, `delay`, `timeout`, timers) run instantly and deterministically.
///
/// The clock starts at `.zero`. Scheduled work waits until ``advance(by:)``, ``advance(to:)`` or
/// ``run()`` moves the clock past its time; then it runs on the calling thread, in time order (work for
/// the same time in the order it was scheduled), with ``now`` reading the time it was due.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let query = PublishSubject<String>()
/// let recorder = Recorder(query.debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)
/// query.send("swift")
/// scheduler.advance(by: .milliseconds(299))
/// print(recorder.values)
/// scheduler.advance(by: .milliseconds(1))
/// print(recorder.values)
/// // Prints "[]", "[\"swift\"]"
/// ```
///
/// ``hot(_:values:error:)`` and ``cold(_:values:error:)`` build sources from marble diagrams, whose
/// characters are ``frame`` apart; ``Recorder`` compares what a pipeline sent with a diagram.
///
/// Cancelled work is released at once and never runs; ``pendingWorkCount`` tells how much is still
/// scheduled, so a test can check that cancelling a pipeline left nothing behind.
public final class TestScheduler: Scheduler, Sendable {
    private struct Item {
        var due: Duration
        var work: ScheduledWork
        var interval: Duration?
    }

    private struct State {
        var now: Duration = .zero
        /// Sorted by due time; equal times keep the order of scheduling (see `insert`).
        var queue: [Item] = []
        var isRunning = false
    }

    /// How many pieces of work ``run()`` runs before it decides the work never ends.
    public static let runLimit = 100_000

    private let state = Lock(State())

    /// The time one character of a marble diagram stands for.
    public let frame: Duration

    /// A scheduler whose clock reads `.zero`.
    ///
    /// - Parameter frame: The time one character of a marble diagram stands for; more than zero.
    public init(frame: Duration = .milliseconds(1)) {
        precondition(frame > .zero, "TestScheduler(frame:) needs a frame of more than zero, got \(frame).")
        self.frame = frame
    }

    /// The virtual time: `.zero` at first, then where the last advance left it (while work runs, the time
    /// that work was due).
    public var now: Duration {
        state.withLock { $0.now }
    }

    /// How many pieces of scheduled work are still waiting (cancelled ones are not counted).
    public var pendingWorkCount: Int {
        state.withLock { $0.queue.count(where: { !$0.work.isCancelled }) }
    }

    // MARK: Scheduling

    /// Schedules `work` for the current virtual time; it runs at the next advance (even
    /// `advance(by: .zero)`), or during the current one when scheduled from running work.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        enqueue(after: .zero, interval: nil, ScheduledWork(work))
    }

    /// Schedules `work` for `now + delay` (a negative delay counts as zero).
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        enqueue(after: delay, interval: nil, ScheduledWork(work))
    }

    /// Schedules `work` for `now + delay`, then every `interval` after that, until cancelled.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the first run.
    ///   - interval: The time between runs; more than zero.
    ///   - work: What to run each time.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        precondition(interval > .zero,
                     "TestScheduler.schedule(after:interval:) needs an interval of more than zero, got \(interval).")
        return enqueue(after: delay, interval: interval, ScheduledWork(repeats: true, work))
    }

    private func enqueue(after delay: Duration, interval: Duration?, _ work: ScheduledWork) -> ScheduledWork {
        state.withLock { state in
            insert(Item(due: state.now + max(delay, .zero), work: work, interval: interval), into: &state)
        }
        return work
    }

    private func insert(_ item: Item, into state: inout State) {
        // After every item due at the same time or earlier: equal times run in scheduling order.
        var low = 0
        var high = state.queue.count
        while low < high {
            let middle = (low + high) / 2
            if state.queue[middle].due <= item.due { low = middle + 1 } else { high = middle }
        }
        state.queue.insert(item, at: low)
    }

    // MARK: Moving the clock

    /// Moves the clock forward by `duration`, running the work due on the way.
    ///
    /// - Parameter duration: Zero or more. `.zero` runs the work due now.
    public func advance(by duration: Duration = .zero) {
        precondition(duration >= .zero,
                     "advance(by:) needs a duration of zero or more, got \(duration); the clock cannot go back.")
        advance(to: now + duration)
    }

    /// Moves the clock to `time`, running the work due up to and including it, in time order; ``now``
    /// reads `time` afterwards.
    ///
    /// - Parameter time: ``now`` or later.
    public func advance(to time: Duration) {
        let start = now
        precondition(time >= start,
                     "advance(to:) needs a time of now (\(start)) or later, got \(time); the clock cannot go back.")
        runWork(until: time, limit: nil)
        state.withLock { $0.now = max($0.now, time) }
    }

    /// Runs scheduled work, moving the clock to each piece's time, until nothing is left.
    ///
    /// Work that keeps scheduling more (an `Observable.interval` nobody cancels) would never end: after
    /// ``runLimit`` pieces of work the program stops with a message; use ``advance(to:)`` for such
    /// pipelines.
    public func run() {
        runWork(until: nil, limit: Self.runLimit)
    }

    private func runWork(until time: Duration?, limit: Int?) {
        state.withLock { state in
            precondition(!state.isRunning,
                         "TestScheduler was advanced from inside work it is running; advance it from the test itself.")
            state.isRunning = true
        }
        defer { state.withLock { $0.isRunning = false } }
        var steps = 0
        while let item = takeNext(upTo: time) {
            steps += 1
            if let limit {
                precondition(steps <= limit,
                             "TestScheduler.run() ran \(limit) pieces of work and more keep coming (a repeating timer?); use advance(to:) instead.")
            }
            guard item.work.run(), let interval = item.interval else { continue }
            state.withLock { state in
                guard !item.work.isCancelled else { return }
                insert(Item(due: item.due + interval, work: item.work, interval: interval), into: &state)
            }
        }
    }

    /// Removes and returns the first live item due by `time` (any time when `nil`), moving the clock to it.
    private func takeNext(upTo time: Duration?) -> Item? {
        state.withLock { state in
            while let first = state.queue.first {
                if first.work.isCancelled {
                    state.queue.removeFirst()
                    continue
                }
                if let time, first.due > time { return nil }
                state.queue.removeFirst()
                state.now = max(state.now, first.due)
                return first
            }
            return nil
        }
    }
}
