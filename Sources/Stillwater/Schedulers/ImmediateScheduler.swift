/// A scheduler that runs work at once, on the calling thread, ignoring delays.
///
/// Useful where an API asks for a scheduler but the caller wants no hop and no wait: `observe(on:
/// .immediate)` changes nothing, and `debounce(for:scheduler: .immediate)` passes every value through.
///
/// ```swift
/// let subscription = Observable.of(1, 2).delay(for: .seconds(5), scheduler: .immediate).observe { print($0) }
/// // at once, with no delay:
/// // Prints "1", "2"
/// ```
///
/// - Note: Work scheduled from inside other work also runs at once, nested in the caller. Repeating work
///   cannot be run immediately (it would never return), so ``schedule(after:interval:_:)`` stops the
///   program; test repeating work with a `TestScheduler` instead.
public struct ImmediateScheduler: Scheduler {
    /// Creates the scheduler; it has no state.
    public init() {}

    /// The real clock (shared with the dispatch schedulers).
    public var now: Duration { SchedulerClock.now }

    /// Runs `work` before returning. The returned cancellable is already spent.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        let scheduled = ScheduledWork(work)
        scheduled.run()
        return scheduled
    }

    /// Runs `work` before returning, without waiting for `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        schedule(work)
    }

    /// Stops the program: repeating work cannot run immediately.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        preconditionFailure(
            "ImmediateScheduler cannot repeat work (schedule(after:interval:) would never return); use a DispatchQueueScheduler, or a TestScheduler in tests.")
    }
}

extension Scheduler where Self == ImmediateScheduler {
    /// A scheduler that runs work at once, on the calling thread: `observe(on: .immediate)`.
    public static var immediate: ImmediateScheduler { ImmediateScheduler() }
}
