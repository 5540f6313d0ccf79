import Dispatch
import Foundation
import Synchronization

/// A dispatch queue is a scheduler: `debounce(for: .milliseconds(300), scheduler: DispatchQueue.main)`
/// reads as it does with Combine, and means the same as `scheduler: .main`.
///
/// Each method does what ``DispatchQueueScheduler`` does over the same queue (the queue's work order,
/// `DispatchTime` deadlines, a dispatch timer for repeating work), so `DispatchQueue.main`,
/// `.queue(DispatchQueue.main)` and `.main` are interchangeable, and so are `myQueue` and
/// `.queue(myQueue)`.
///
/// <!-- doc-test: waits for the search, 300 ms of real time later on the queue -->
/// ```swift
/// import Dispatch
///
/// let queue = DispatchQueue(label: "search")
/// let query = PublishSubject<String>()
/// let subscription = query
///     .debounce(for: .milliseconds(300), scheduler: queue)
///     .observe { print("search for \($0)") }
/// query.send("swift")
/// // 300 ms later, on the queue:
/// // Prints "search for swift"
/// ```
///
/// - Note: Where Combine is imported too (Apple platforms), `DispatchQueue` also has Combine's `now`
///   and `schedule` methods; Stillwater's operators pick this conformance by their `Duration` types,
///   but a direct `queue.now` then needs a type: `let now: Duration = queue.now`.
extension DispatchQueue: Scheduler {
    /// The real clock shared by Stillwater's real schedulers: the time since their process-wide origin.
    public var now: Duration { SchedulerClock.now }

    /// Runs `work` on the queue, after the work already submitted to it.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        DispatchQueueScheduler(self).schedule(work)
    }

    /// Runs `work` on the queue once `delay` has passed; a delay of zero or less runs it on the queue's
    /// next turn.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        DispatchQueueScheduler(self).schedule(after: delay, work)
    }

    /// Runs `work` on the queue once `delay` has passed, then every `interval` (more than zero), with a
    /// dispatch timer, until cancelled.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        DispatchQueueScheduler(self).schedule(after: delay, interval: interval, work)
    }
}

/// An operation queue is a scheduler: each piece of work becomes an operation on the queue, added when
/// its time comes.
///
/// <!-- doc-test: waits for the operation, 100 ms of real time later on the queue -->
/// ```swift
/// import Foundation
///
/// let queue = OperationQueue()
/// queue.maxConcurrentOperationCount = 1
/// queue.schedule(after: .milliseconds(100)) { print("ran on the queue") }
/// // 100 ms later, as an operation of the queue:
/// // Prints "ran on the queue"
/// ```
///
/// On a queue with `maxConcurrentOperationCount` of 1, work runs one piece at a time in due-time order.
/// On a concurrent queue, separate pieces may run at once (the operators of this package still deliver
/// one event at a time to each observer); repeating work never overlaps itself: a tick that comes while
/// the last run is still going is skipped. Delays are kept by a dispatch timer, which adds the operation
/// when the delay has passed; cancelling releases the work's closure at once.
///
/// - Note: `RunLoop` is not a scheduler: Foundation marks it as not `Sendable` (a run loop belongs to its
///   thread), and a ``Scheduler`` must be usable from any thread. Use `DispatchQueue.main` or `.main`
///   for the main thread.
extension OperationQueue: Scheduler {
    /// The real clock shared by Stillwater's real schedulers: the time since their process-wide origin.
    public var now: Duration { SchedulerClock.now }

    /// Adds `work` to the queue as an operation.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        let scheduled = ScheduledWork(work)
        addOperation { scheduled.run() }
        return scheduled
    }

    /// Adds `work` to the queue as an operation once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        guard delay > .zero else { return schedule(work) }
        let scheduled = ScheduledWork(work)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds)) { [self] in
            guard !scheduled.isCancelled else { return }
            addOperation { scheduled.run() }
        }
        return scheduled
    }

    /// Adds `work` to the queue as an operation once `delay` has passed, then every `interval` (more than
    /// zero), until cancelled; a tick that comes while the last run is still going is skipped.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        // The dispatch timer below checks `interval` (a precondition naming it).
        let scheduled = ScheduledWork(repeats: true, work)
        let running = BusyFlag()
        let timer = DispatchQueueScheduler(DispatchQueue.global()).schedule(after: delay, interval: interval) { [self] in
            guard !scheduled.isCancelled,
                  running.busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
            else { return }
            addOperation {
                scheduled.run()
                running.busy.store(false, ordering: .releasing)
            }
        }
        return CancelBoth(first: timer, second: scheduled)
    }
}

/// Whether a repeating operation is running, so the next tick skips it.
private final class BusyFlag: Sendable {
    let busy = Atomic<Bool>(false)
}

/// Cancels two cancellables at once: the timer that adds the operations, and the work.
private final class CancelBoth: Cancellable {
    let first: any Cancellable
    let second: any Cancellable

    init(first: any Cancellable, second: any Cancellable) {
        self.first = first
        self.second = second
    }

    func cancel() {
        first.cancel()
        second.cancel()
    }
}
