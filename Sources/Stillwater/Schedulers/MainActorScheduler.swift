import Dispatch

/// A scheduler that runs work on the main actor (the main thread), in the order it was scheduled.
///
/// Use it to bring events to code that must run on the main actor: `observe(on: .main)`. The work is not
/// typed `@MainActor`; inside it, `MainActor.assumeIsolated { … }` reaches main-actor state.
///
/// ```swift
/// let subscription = results
///     .observe(on: .main)
///     .observe { value in MainActor.assumeIsolated { label.text = value } }
/// ```
///
/// Work always waits for the next turn of the main queue, even when scheduled from the main thread, so
/// it never runs nested inside the caller.
///
/// - Note: The main actor runs its work on the main dispatch queue, so this scheduler enqueues there; a
///   program must keep that queue served (an app's run loop, `dispatchMain()`, or an `async` `main`). On
///   Linux, once the main thread has handed the main queue to dispatch, a dispatch thread may serve it:
///   the work is still isolated to the main actor, but `Thread.isMainThread` can be `false`.
public struct MainActorScheduler: Scheduler {
    private var base: DispatchQueueScheduler { DispatchQueueScheduler(.main) }

    /// Creates the scheduler; every instance schedules on the same main actor.
    public init() {}

    /// The real clock: the time since the process-wide origin of the real schedulers.
    public var now: Duration { SchedulerClock.now }

    /// Runs `work` on the main actor, after the work already scheduled there.
    @discardableResult
    public func schedule(_ work: @escaping () -> Void) -> any Cancellable {
        base.schedule(work)
    }

    /// Runs `work` on the main actor once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        base.schedule(after: delay, work)
    }

    /// Runs `work` on the main actor once `delay` has passed, then every `interval`.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the first run.
    ///   - interval: The time between runs; more than zero.
    ///   - work: What to run each time.
    @discardableResult
    public func schedule(after delay: Duration, interval: Duration, _ work: @escaping () -> Void) -> any Cancellable {
        base.schedule(after: delay, interval: interval, work)
    }
}

extension Scheduler where Self == MainActorScheduler {
    /// The scheduler that runs work on the main actor: `observe(on: .main)`.
    public static var main: MainActorScheduler { MainActorScheduler() }
}
