import Dispatch

/// A scheduler that runs work on the main actor (the main thread), in the order it was scheduled.
///
/// Use it to bring events to code that must run on the main actor: `observe(on: .main)`. The work is not
/// typed `@MainActor`; inside it, `MainActor.assumeIsolated { … }` reaches main-actor state.
///
/// <!-- doc-test: waits for the result, delivered on the main actor after the last line -->
/// ```swift
/// @MainActor final class StatusLabel {
///     var text = "" { didSet { print(text) } }
/// }
/// let label = StatusLabel()
/// let results = PublishSubject<String>()
/// let subscription = results
///     .observe(on: .main)
///     .observe { value in MainActor.assumeIsolated { label.text = value } }
/// results.send("3 results")
/// // on the next turn of the main actor:
/// // Prints "3 results"
/// ```
///
/// Work always waits for the next turn of the main queue, even when scheduled from the main thread, so
/// it never runs nested inside the caller.
///
/// - Important: In a command-line program, work scheduled on `.main` never runs unless something serves
///   the main queue. An app's run loop does; a `main.swift` whose top-level code runs to its end (or
///   blocks, waiting) does not, so its `.main` timers, delays and deliveries never fire. In such a
///   program, either hand the main thread to dispatch with `dispatchMain()` once everything is set up
///   (it never returns; call `exit(_:)` when done), or schedule on a queue of its own:
///
/// <!-- doc-test: skip a whole program: dispatchMain() never returns and exit(0) ends the process -->
/// ```swift
/// // main.swift of a command-line tool
/// import Foundation
///
/// let subscription = Observable.timer(.seconds(1), scheduler: .main).observe { _ in
///     print("time's up")
///     exit(0)
/// }
/// dispatchMain()
/// // one second later, then the program ends:
/// // Prints "time's up"
/// ```
///
/// <!-- doc-test: waits for the timer, one second of real time later on the program's own queue -->
/// ```swift
/// import Dispatch
///
/// // No main queue needed: the work runs on a queue the program owns.
/// let work = DispatchQueue(label: "work")
/// let subscription = Observable.timer(.seconds(1), scheduler: .queue(work)).observe { _ in print("time's up") }
/// // one second later, while the program is still running:
/// // Prints "time's up"
/// ```
///
/// - Note: The main actor runs its work on the main dispatch queue, so this scheduler enqueues there; a
///   program must keep that queue served (an app's run loop, `dispatchMain()`, or an `async` `main` while
///   it awaits). On Linux, once the main thread has handed the main queue to dispatch, a dispatch thread
///   may serve it: the work is still isolated to the main actor, but `Thread.isMainThread` can be `false`.
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
    ///
    /// Its work runs only while the main queue is served: by an app's run loop, or in a command-line
    /// program by `dispatchMain()`. A command-line program that never serves it never sees `.main` work
    /// run; use `.queue(DispatchQueue(label: …))` there instead (see ``MainActorScheduler``).
    public static var main: MainActorScheduler { MainActorScheduler() }
}
