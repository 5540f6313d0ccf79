import Dispatch
import Foundation
import Synchronization

/// A key that names one dependency of a store's effects, and the value effects get when nobody set one.
///
/// Declare a key per collaborator (an API client, a clock, a file system), then a property on
/// ``Dependencies`` that reads and writes it, so effects say `dependencies.weather`:
///
/// ```swift
/// struct Weather: Sendable { var temperature: @Sendable (String) async throws -> Int }
/// enum WeatherKey: DependencyKey {
///     static var defaultValue: Weather { Weather(temperature: { _ in 20 }) }
/// }
/// extension Dependencies {
///     var weather: Weather {
///         get { self[WeatherKey.self] }
///         set { self[WeatherKey.self] = newValue }
///     }
/// }
/// var dependencies = Dependencies()
/// dependencies.weather = Weather(temperature: { _ in 4 })
/// print(try await dependencies.weather.temperature("Oslo"))
/// // Prints "4"
/// ```
public protocol DependencyKey {
    /// The type of the dependency.
    associatedtype Value: Sendable

    /// The value a ``Dependencies`` container holds for this key until one is set.
    static var defaultValue: Value { get }
}

/// The collaborators a store's effects use, handed to the store when it is made and to every effect
/// when it starts.
///
/// A `Dependencies` is a value: each store has its own copy, so a test overrides what it needs for its
/// store alone, and no global singleton is read. A key nobody set reads its ``DependencyKey/defaultValue``.
///
/// ```swift
/// var dependencies = Dependencies()
/// let scheduler = TestScheduler()
/// dependencies.scheduler = scheduler
/// print(dependencies.scheduler is TestScheduler)
/// // Prints "true"
/// ```
public struct Dependencies: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// A container in which every key reads its default value.
    public init() {}

    /// A container with the changes `configure` makes to a fresh one.
    ///
    /// ```swift
    /// let dependencies = Dependencies { $0.scheduler = ImmediateScheduler() }
    /// print(dependencies.scheduler is ImmediateScheduler)
    /// // Prints "true"
    /// ```
    public init(_ configure: (inout Dependencies) -> Void) {
        configure(&self)
    }

    /// Whether no key was set (every key reads its default).
    var isEmpty: Bool { values.isEmpty }

    /// The value set for `key`, or its ``DependencyKey/defaultValue`` when none was set.
    public subscript<Key: DependencyKey>(key: Key.Type) -> Key.Value {
        get {
            // Only the setter below stores under this key, always a `Key.Value`.
            values[ObjectIdentifier(key)].map { $0 as! Key.Value } ?? Key.defaultValue
        }
        set {
            values[ObjectIdentifier(key)] = newValue
        }
    }
}

/// The key of ``Dependencies/scheduler``.
enum SchedulerKey: DependencyKey {
    static var defaultValue: any Scheduler { DispatchQueueScheduler(DispatchQueue.global()) }
}

extension Dependencies {
    /// The scheduler effects wait on (a debounce, a delay, a timer, ``Scheduler/sleep(for:)``).
    ///
    /// A dispatch-queue scheduler on a global queue unless set; a test sets a `TestScheduler`, so waits
    /// take no real time.
    public var scheduler: any Scheduler {
        get { self[SchedulerKey.self] }
        set { self[SchedulerKey.self] = newValue }
    }
}

/// Where a reduce or an effect reads the current date: `dependencies.date.now`. The real clock unless set;
/// a test fixes it with ``constant(_:)`` (`TestStore` does, at 1 January 1970).
///
/// ```swift
/// import Foundation
///
/// let dependencies = Dependencies { $0.date = .constant(Date(timeIntervalSince1970: 60)) }
/// print(dependencies.date.now.timeIntervalSince1970)
/// // Prints "60.0"
/// ```
public struct DateGenerator: Sendable {
    private let read: @Sendable () -> Date

    /// A generator whose ``now`` is what `now` returns each time it is read.
    public init(_ now: @escaping @Sendable () -> Date) {
        read = now
    }

    /// The current date, as this generator tells it.
    public var now: Date { read() }

    /// The system's clock: `Date()`.
    public static var live: DateGenerator { DateGenerator { Date() } }

    /// Always `date`.
    public static func constant(_ date: Date) -> DateGenerator {
        DateGenerator { date }
    }
}

/// Where a reduce or an effect gets new identifiers: `dependencies.uuid()`. Random (`UUID()`) unless set;
/// a test makes them predictable with ``incrementing`` (`TestStore` does).
///
/// ```swift
/// import Foundation
///
/// let dependencies = Dependencies { $0.uuid = .incrementing }
/// print(dependencies.uuid(), dependencies.uuid())
/// // Prints "00000000-0000-0000-0000-000000000000 00000000-0000-0000-0000-000000000001"
/// ```
///
/// Safe from any thread; an incrementing generator hands out each identifier once, whoever asks.
public struct UUIDGenerator: Sendable {
    private let make: @Sendable () -> UUID

    /// A generator that calls `make` for each new identifier.
    public init(_ make: @escaping @Sendable () -> UUID) {
        self.make = make
    }

    /// A new identifier.
    public func callAsFunction() -> UUID { make() }

    /// Random identifiers: `UUID()`.
    public static var live: UUIDGenerator { UUIDGenerator { UUID() } }

    /// 00000000-0000-0000-0000-000000000000, then …0001, …0002 and so on (the count in the last 12
    /// hexadecimal digits): each value made from it counts on its own, from zero.
    public static var incrementing: UUIDGenerator {
        let counter = UUIDCounter()
        return UUIDGenerator { counter.next() }
    }
}

/// The count behind ``UUIDGenerator/incrementing``.
private final class UUIDCounter: Sendable {
    private let count = Atomic<UInt64>(0)

    func next() -> UUID {
        let value = count.wrappingAdd(1, ordering: .relaxed).oldValue
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<8 { raw[15 - index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
        }
        return UUID(uuid: bytes)
    }
}

enum DateKey: DependencyKey {
    static var defaultValue: DateGenerator { .live }
}

enum UUIDKey: DependencyKey {
    static var defaultValue: UUIDGenerator { .live }
}

extension Dependencies {
    /// The current date for reduces and effects (``DateGenerator``): the system clock unless set.
    public var date: DateGenerator {
        get { self[DateKey.self] }
        set { self[DateKey.self] = newValue }
    }

    /// New identifiers for reduces and effects (``UUIDGenerator``): random unless set.
    public var uuid: UUIDGenerator {
        get { self[UUIDKey.self] }
        set { self[UUIDKey.self] = newValue }
    }
}

/// The key of ``Dependencies/taskExecutor``.
enum TaskExecutorKey: DependencyKey {
    static var defaultValue: (any TaskExecutor)? { nil }
}

extension Dependencies {
    /// The executor the tasks of ``Effect/run(priority:_:catch:)`` effects prefer; `nil` (the global
    /// executor) unless set. `TestStore` sets one it drives, so a test runs effects' tasks itself.
    package var taskExecutor: (any TaskExecutor)? {
        get { self[TaskExecutorKey.self] }
        set { self[TaskExecutorKey.self] = newValue }
    }
}

/// The key of ``Dependencies/effectEnded``.
enum EffectEndedKey: DependencyKey {
    static var defaultValue: (@Sendable () -> Void)? { nil }
}

extension Dependencies {
    /// Called each time one of the store's running effects stops running (it ended, or a cancel stopped
    /// it), on the thread where that happened, after the store stopped counting it; `nil` unless set.
    /// `TestStore` sets one, so that its `finish` is woken by an effect's end instead of polling.
    package var effectEnded: (@Sendable () -> Void)? {
        get { self[EffectEndedKey.self] }
        set { self[EffectEndedKey.self] = newValue }
    }
}

extension Scheduler {
    /// Suspends the calling task until `duration` has passed on this scheduler's clock.
    ///
    /// On a `TestScheduler` the task resumes when the test moves the clock past the wake-up time. A
    /// cancelled task stops waiting at once and this throws `CancellationError`.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()     // an app's effects get a real scheduler
    /// let nap = Task {
    ///     try await scheduler.sleep(for: .seconds(5))
    ///     print("woke at", scheduler.now)
    /// }
    /// while scheduler.pendingWorkCount == 0 { await Task.yield() }   // the task began its sleep
    /// scheduler.advance(by: .seconds(5))
    /// try await nap.value
    /// // Prints "woke at 5.0 seconds"
    /// ```
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let waiter = SleepWaiter()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                waiter.begin(continuation, cancellable: Subscription(schedule(after: duration) { waiter.finish(throwing: nil) }))
            }
        } onCancel: {
            waiter.finish(throwing: CancellationError())
        }
    }
}

/// One sleeping task: resumed once, by its timer or by its cancellation, whichever comes first.
private final class SleepWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var cancellable: Subscription?
        /// Set when the timer fired or the task was cancelled before `begin`.
        var outcome: (any Error)??
    }

    private let state = Lock(State())

    func begin(_ continuation: CheckedContinuation<Void, any Error>, cancellable: Subscription) {
        let early: (any Error)?? = state.withLock { state in
            guard let outcome = state.outcome else {
                state.continuation = continuation
                state.cancellable = cancellable
                return nil
            }
            return .some(outcome)
        }
        guard let early else { return }
        cancellable.cancel()
        if let error = early { continuation.resume(throwing: error) } else { continuation.resume() }
    }

    func finish(throwing error: (any Error)?) {
        let (continuation, cancellable) = state.withLock { state in
            defer { state.continuation = nil; state.cancellable = nil }
            if state.continuation == nil, state.outcome == nil { state.outcome = .some(error) }
            return (state.continuation, state.cancellable)
        }
        if error != nil { cancellable?.cancel() }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}
