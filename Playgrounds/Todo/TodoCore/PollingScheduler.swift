import Stillwater

/// A scheduler whose work runs only when its owner calls ``runDue()``: on the owner's thread, between
/// the owner's other work, never on a thread of its own.
///
/// The interactive `todo` runs its key loop on one thread and its session is not thread-safe, so the
/// session's delayed save waits on a `PollingScheduler`, and the loop calls ``runDue()`` each time it
/// wakes (a key, or the key read's timeout, which ``timeUntilNextDue`` can shorten).
///
/// ```swift
/// var time = Duration.zero
/// let scheduler = PollingScheduler(now: { time })
/// scheduler.schedule(after: .milliseconds(400)) { print("saved") }
/// scheduler.runDue()                  // nothing is due yet
/// time = .milliseconds(400)
/// scheduler.runDue()
/// // Prints "saved"
/// ```
///
/// Guarantees: work runs in the order of its due time, and work due at the same time in the order it
/// was scheduled; a ``Cancellable`` cancelled before its turn never runs, and its closure is released at
/// once. Work may be scheduled and cancelled from any thread; it still runs only in ``runDue()``.
public final class PollingScheduler: Scheduler, @unchecked Sendable {
    // `@unchecked`: the clock is a `@Sendable` function and `queue` is only touched under its lock; a
    // custom clock that reads unsynchronised state is the test's own business (it runs on one thread).
    private struct Item {
        var due: Duration
        var order: Int
        var work: ScheduledWork
        var interval: Duration?
    }

    private struct Queue {
        var items: [Item] = []
        var nextOrder = 0

        mutating func insert(_ work: ScheduledWork, due: Duration, interval: Duration?) {
            let item = Item(due: due, order: nextOrder, work: work, interval: interval)
            nextOrder += 1
            let index = items.firstIndex { $0.due > due } ?? items.endIndex
            items.insert(item, at: index)
        }
    }

    private let clock: () -> Duration
    private let queue = Lock(Queue())

    /// A scheduler reading the time from `now` (the time since any fixed origin).
    ///
    /// - Parameter now: The clock; the system's continuous clock unless given (a test passes its own).
    public init(now: @escaping () -> Duration = PollingScheduler.continuousNow) {
        clock = now
    }

    /// The continuous clock's time since the first time it was read.
    public static func continuousNow() -> Duration {
        origin.duration(to: ContinuousClock.now)
    }

    private static let origin = ContinuousClock.now

    /// The time on this scheduler's clock.
    public var now: Duration { clock() }

    /// How much work is scheduled and not cancelled.
    public var pendingWorkCount: Int {
        queue.withLock { $0.items.count { !$0.work.isCancelled } }
    }

    /// How long until the earliest work is due (`.zero` when some is due already), or `nil` when
    /// nothing is scheduled: how long the owner may sleep before calling ``runDue()``.
    public var timeUntilNextDue: Duration? {
        let due = queue.withLock { $0.items.first { !$0.work.isCancelled }?.due }
        guard let due else { return nil }
        return max(.zero, due - now)
    }

    /// Schedules `work` for the next ``runDue()``.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        schedule(after: .zero, work)
    }

    /// Schedules `work` for the first ``runDue()`` once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        let scheduled = ScheduledWork(work)
        let due = now + max(delay, .zero)
        queue.withLock { $0.insert(scheduled, due: due, interval: nil) }
        return scheduled
    }

    /// Schedules `work` for the first ``runDue()`` once `delay` has passed, then every `interval` after
    /// that (a ``runDue()`` that comes late runs it once for each time it was due).
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        precondition(interval > .zero, "PollingScheduler.schedule(after:interval:_:) needs an interval of more than zero, got \(interval).")
        let scheduled = ScheduledWork(repeats: true, work)
        let due = now + max(delay, .zero)
        queue.withLock { $0.insert(scheduled, due: due, interval: interval) }
        return scheduled
    }

    /// Runs, on the calling thread, every piece of work due by now (the time when the call began), in
    /// due order; work it schedules that is due by then runs too, after the work due before it.
    ///
    /// - Returns: How many pieces of work ran.
    @discardableResult
    public func runDue() -> Int {
        let limit = now
        var ran = 0
        while true {
            // Take the next due item under the lock; run it outside it (it may schedule more work).
            let next = queue.withLock { queue -> Item? in
                guard let first = queue.items.first, first.due <= limit else { return nil }
                queue.items.removeFirst()
                if let interval = first.interval, !first.work.isCancelled {
                    queue.insert(first.work, due: first.due + interval, interval: interval)
                }
                return first
            }
            guard let next else { return ran }
            if next.work.run() { ran += 1 }
        }
    }
}
