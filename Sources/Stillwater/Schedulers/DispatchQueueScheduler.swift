import Dispatch

/// A scheduler that runs work on a `DispatchQueue`.
///
/// On a serial queue, work runs one piece at a time in due-time order. On a concurrent queue, separate
/// pieces of work may run at once; the operators of this package still deliver one event at a time to
/// each observer, in order.
///
/// <!-- doc-test: waits for the search, 300 ms of real time later on the queue -->
/// ```swift
/// import Dispatch
///
/// let queue = DispatchQueue(label: "search")
/// let query = PublishSubject<String>()
/// let subscription = query
///     .debounce(for: .milliseconds(300), scheduler: .queue(queue))
///     .observe { print("search for \($0)") }
/// query.send("swift")
/// // 300 ms later, on the queue:
/// // Prints "search for swift"
/// ```
///
/// Delays use the queue's clock (`DispatchTime`); ``now`` reads the process-wide clock shared by the real
/// schedulers. Cancelling scheduled work releases its closure at once, even before its deadline.
public struct DispatchQueueScheduler: Scheduler {
    /// The queue the work runs on.
    public let queue: DispatchQueue

    /// A scheduler over `queue`.
    public init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    /// The real clock: the time since the process-wide origin of the real schedulers.
    public var now: Duration { SchedulerClock.now }

    /// Runs `work` on the queue, after the work already submitted to it.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        let scheduled = ScheduledWork(work)
        queue.async { scheduled.run() }
        return scheduled
    }

    /// Runs `work` on the queue once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        guard delay > .zero else { return schedule(work) }
        let scheduled = ScheduledWork(work)
        queue.asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds)) { scheduled.run() }
        return scheduled
    }

    /// Runs `work` on the queue once `delay` has passed, then every `interval`, with a dispatch timer.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the first run.
    ///   - interval: The time between runs; more than zero.
    ///   - work: What to run each time.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        precondition(interval > .zero,
                     "schedule(after:interval:) needs an interval of more than zero, got \(interval).")
        let scheduled = ScheduledWork(repeats: true, work)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(delay.clampedNanoseconds),
                       repeating: .nanoseconds(interval.clampedNanoseconds))
        // A dispatch source never runs its handler twice at once, even on a concurrent queue.
        timer.setEventHandler { scheduled.run() }
        timer.resume()
        return RepeatingDispatchWork(work: scheduled, timer: timer)
    }
}

/// Repeating work on a dispatch timer: cancelling it releases the closure, stops the timer and lets go of
/// it.
private final class RepeatingDispatchWork: Cancellable, Sendable {
    private let work: ScheduledWork
    /// The timer until the first cancel takes it. It is under a lock because its type is not `Sendable`
    /// in every Dispatch (Linux's), so the compiler can check this class; the lock is taken once.
    private let timer: Lock<(any DispatchSourceTimer)?>

    init(work: ScheduledWork, timer: sending any DispatchSourceTimer) {
        self.work = work
        self.timer = Lock(timer)
    }

    func cancel() {
        work.cancel()
        timer.withLock { $0.take() }?.cancel()
    }
}

extension Scheduler where Self == DispatchQueueScheduler {
    /// A scheduler over `queue`: `observe(on: .queue(workQueue))`.
    public static func queue(_ queue: DispatchQueue) -> DispatchQueueScheduler {
        DispatchQueueScheduler(queue)
    }
}
