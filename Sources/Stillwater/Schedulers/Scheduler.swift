/// Something that runs work now, after a delay, or repeatedly: the clock the time operators read.
///
/// Every time operator (`debounce`, `throttle`, `delay`, `timeout`, `observe(on:)`, `subscribe(on:)`,
/// ``Observable/timer(_:scheduler:)``, ``Observable/interval(_:scheduler:)``) takes a scheduler, so the
/// same pipeline runs on a dispatch queue in the app and on a virtual clock in tests
/// (`TestScheduler`, in the `StillwaterTesting` library).
///
/// Time is a Swift `Duration`, for delays and for ``now`` alike, so call sites read
/// `debounce(for: .milliseconds(300), scheduler: scheduler)` on every scheduler.
///
/// ```swift
/// let scheduler = ImmediateScheduler()
/// scheduler.schedule { print("ran") }
/// // Prints "ran"
/// ```
///
/// What a conforming type must guarantee:
/// - work scheduled for the same time runs in the order it was scheduled, and work scheduled for an
///   earlier time runs first;
/// - one piece of repeating work never runs twice at the same time;
/// - after the returned ``Cancellable`` is cancelled, the work does not start again, and the closure (with
///   everything it captured) is released at once, not when its time comes. Work already running finishes.
///
/// The returned cancellable does not cancel itself when released: dropping it leaves the work scheduled
/// (unlike a ``Subscription``). Keep it only to cancel.
public protocol Scheduler: Sendable {
    /// The scheduler's clock: how long since its origin.
    ///
    /// A virtual scheduler starts at `.zero` and moves only when told; the real schedulers of this package
    /// share one origin (the first time any of them is read), so their readings compare.
    var now: Duration { get }

    /// Runs `work` as soon as the scheduler can: at once for ``ImmediateScheduler``, on the next turn of
    /// the queue for the dispatch schedulers.
    @discardableResult
    func schedule(_ work: @escaping () -> Void) -> any Cancellable

    /// Runs `work` once, when `delay` has passed. A delay of zero or less means as soon as possible.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable

    /// Runs `work` when `delay` has passed, then again every `interval`, until cancelled.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the first run.
    ///   - interval: The time between runs; must be more than zero.
    ///   - work: What to run each time.
    @discardableResult
    func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable
}

/// A piece of work handed to a scheduler: runs it on request until cancelled, and releases the closure at
/// the moment it is cancelled (or after its one run), so nothing it captured outlives it.
///
/// Schedulers, including ones written outside this package, wrap each closure in one and hand it back as
/// the ``Cancellable``:
///
/// ```swift
/// let work = ScheduledWork { print("tick") }
/// work.run()
/// work.cancel()
/// work.run()      // does nothing: cancelled
/// // Prints "tick"
/// ```
///
/// `run()` and `cancel()` are safe from any thread at once. The closure is called outside the lock, so it
/// may cancel its own work.
// @unchecked Sendable: the closure is not `Sendable`. A scheduler calls the work it is handed on its own
// thread, which is what scheduling is (``Scheduler``); `run()` and `cancel()` take it out under the lock.
public final class ScheduledWork: Cancellable, @unchecked Sendable {
    private struct State {
        var work: (() -> Void)?
    }

    private let state: LockedBox<State>
    private let repeats: Bool

    /// Wraps `work`; with `repeats`, ``run()`` can run it any number of times, otherwise only once.
    public init(repeats: Bool = false, _ work: @escaping () -> Void) {
        self.repeats = repeats
        state = LockedBox(State(work: work))
    }

    /// Runs the work unless it was cancelled (or, for one-shot work, already ran).
    ///
    /// - Returns: Whether the work ran.
    @discardableResult
    public func run() -> Bool {
        let repeats = self.repeats
        let work = state.withLock { state -> (() -> Void)? in
            defer { if !repeats { state.work = nil } }
            return state.work
        }
        guard let work else { return false }
        work()
        return true
    }

    /// Stops the work from running again and releases its closure. Safe to call more than once.
    public func cancel() {
        let released = state.withLock { state -> (() -> Void)? in
            defer { state.work = nil }
            return state.work
        }
        // Released outside the lock: dropping the closure may run deinitialisers that call back in.
        _ = consume released
    }

    /// Whether the work can no longer run: cancelled, or one-shot work that already ran.
    public var isCancelled: Bool {
        state.withLock { $0.work == nil }
    }
}

/// The clock of the real schedulers: one origin for the whole process, so their `now` readings compare.
enum SchedulerClock {
    static let origin = ContinuousClock.now

    /// The time since ``origin``.
    static var now: Duration {
        origin.duration(to: ContinuousClock.now)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `0...Int.max` (a negative duration is zero).
    var clampedNanoseconds: Int {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (wholeSeconds, overflow) = Int(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowAdding) = wholeSeconds.addingReportingOverflow(Int(attoseconds / 1_000_000_000))
        return overflowAdding ? .max : total
    }
}

/// Checks the arguments the time operators share, with a message that names the operator.
@usableFromInline
func preconditionNotNegative(_ duration: Duration, _ argument: String, of function: String) {
    precondition(duration >= .zero,
                 "\(function) needs \(argument) of zero or more, got \(duration); pass .zero to act on the next turn of the scheduler.")
}
