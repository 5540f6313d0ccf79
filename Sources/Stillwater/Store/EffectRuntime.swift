import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The effects a store is running, and what it knows about cancellation.
///
/// Threads: effects start, and are cancelled by id, on the thread running the store's queue (the
/// deliverer), inside the reduce of the action that returned them. They end on any thread (a stream's
/// last event, a task's end). So:
/// - `registry` (the effects still running and what stops each) is under its lock;
/// - ``owned`` (the ``StoreDeliverer``: the current ``CancelToken`` of each id, the groups, the child
///   features) and the ``middleware`` are the deliverer's, reached through ``Store/deliverer``;
/// - an effect that ends during its own start (a stream that delivers synchronously) is never
///   registered: its ``EffectRecord/phase`` tells the starter, so it costs no lock at all.
///
/// The store's own fields are constants of `Sendable` types, so `Store` is checked `Sendable`; what
/// the compiler cannot check is here, in one place.
// @unchecked: `owned` and `middleware` belong to the store's deliverer (debug builds check every access
// through `Store.deliverer`), which the compiler cannot see; `registry` holds records that are not
// `Sendable`, read and written only under its lock.
@usableFromInline final class EffectRuntime: @unchecked Sendable {
    /// What stops one running effect.
    @usableFromInline
    enum Stopper {
        case subscription(Subscription)
        case task(Task<Void, Never>)

        @usableFromInline
        func stop() {
            switch self {
            case .subscription(let subscription): subscription.cancel()
            case .task(let task): task.cancel()
            }
        }
    }

    @usableFromInline
    struct Registry {
        /// The registered effects, with what stops each and the order they registered in.
        @usableFromInline
        var running: [ObjectIdentifier: (record: EffectRecord, stopper: Stopper?, order: UInt64)] = [:]
        @usableFromInline
        var nextOrder: UInt64 = 0
        /// Set when the store is released: effects that would register are stopped instead.
        @usableFromInline
        var isClosed = false
    }

    @usableFromInline
    let dependencies: Dependencies
    /// The dependencies as the store lends them to its reduces (``DependencyContext/enter(_:)``); `nil`
    /// when every key is at its default, so a store made without dependencies marks nothing.
    @usableFromInline
    let context: DependencyContext?
    /// The store, for effects that send or end after their start, or from another thread. Set once, on
    /// the deliverer, before the store's first effect starts (``link(_:)``), so every sink made after it
    /// reads it without a lock; it is `nil` once the store is released.
    @usableFromInline
    weak var store: AnyObject?
    @usableFromInline
    let onError: @Sendable (any Error) -> Void
    @usableFromInline
    let registry = LockedBox(Registry())
    /// Told, after the lock, each time a running effect leaves ``registry`` (``Dependencies/effectEnded``);
    /// `nil` for a store made without dependencies.
    @usableFromInline
    let effectEnded: (@Sendable () -> Void)?
    /// The deliverer's state. Reach it only through ``Store/deliverer``, which checks the thread in debug
    /// builds; nothing else names this field but the store's `deinit`, which empties it (it may hold a
    /// spare sink or a group, which hold this runtime).
    ///
    /// `@exclusivity(unchecked)`, the one left on a store's own state: the deliverer alone touches it, one
    /// short access at a time, and the runtime's check of each access costs 442 instructions per W9 round
    /// trip (2 317 to 2 759, +19%) and 82 per W5 dispatch (357 to 439, +23%), measured with the speed
    /// gate (see the engine article's list of these fields).
    @usableFromInline
    @exclusivity(unchecked) var owned = StoreDeliverer()
    /// The middleware chain ending in the reducer (a ``MiddlewareChain`` of the store's state type), or
    /// `nil` without middleware. Set once, in `init`; run by the deliverer only. It holds the middleware,
    /// so the store owns (and frees) what they captured.
    @usableFromInline
    let middleware: AnyObject?

    @usableFromInline
    init(dependencies: Dependencies, onError: @escaping @Sendable (any Error) -> Void, middleware: AnyObject? = nil) {
        self.dependencies = dependencies
        context = dependencies.isEmpty ? nil : DependencyContext(dependencies)
        effectEnded = dependencies.isEmpty ? nil : dependencies.effectEnded
        self.onError = onError
        self.middleware = middleware
    }

    /// Deliverer only: whether none of `tokens` was cancelled.
    @usableFromInline
    func isLive(_ tokens: [CancelToken]) -> Bool {
        for token in tokens where token.isCancelled.load(ordering: .relaxed) { return false }
        return true
    }

    /// Deliverer only: whether an action `record`'s effect sent may be reduced.
    @usableFromInline
    func isLive(_ record: EffectRecord) -> Bool {
        if let group = record.group, group.completion.isCancelled.load(ordering: .acquiring) { return false }
        return !record.isCancelled.load(ordering: .acquiring) && isLive(record.tokens)
    }

    /// How many effects are running (those that outlived their start and have not ended).
    @usableFromInline
    var runningCount: Int {
        registry.withLock { $0.running.count }
    }

    /// Called by the starter once the effect's work began: registers it, unless it already ended (then
    /// returns `false`, and the caller runs its `onFinish`).
    @usableFromInline
    func settle(_ record: EffectRecord, stopper: Stopper?) -> Bool {
        // The common case of a synchronous stream: it ended during its start; no lock.
        if record.phase.load(ordering: .acquiring) == EffectRecord.done { return false }
        // The phase moves to registered and the record enters the registry in one step, so an end on
        // another thread (which unregisters after moving the phase on) always finds it there.
        let outcome: Bool? = registry.withLock { registry in
            guard record.phase.compareExchange(expected: EffectRecord.starting, desired: EffectRecord.registered,
                                               ordering: .acquiringAndReleasing).exchanged else { return false }
            guard !registry.isClosed else { return nil }
            registry.running[ObjectIdentifier(record)] = (record, stopper, registry.nextOrder)
            registry.nextOrder &+= 1
            return true
        }
        guard let outcome else {
            record.isCancelled.store(true, ordering: .releasing)
            stopper?.stop()
            return true
        }
        return outcome
    }

    /// Any thread: the effect of `record` ended by itself. Returns `true` when the caller must run the
    /// record's `onFinish` on the deliverer and then ``unregister(_:)`` it; `false` when there is nothing
    /// to do (the starter will notice, or it was cancelled already).
    @usableFromInline
    func finish(_ record: EffectRecord) -> Bool {
        while true {
            switch record.phase.load(ordering: .acquiring) {
            case EffectRecord.starting:
                if record.phase.compareExchange(expected: EffectRecord.starting, desired: EffectRecord.done,
                                                ordering: .acquiringAndReleasing).exchanged { return false }
            case EffectRecord.registered:
                if record.phase.compareExchange(expected: EffectRecord.registered, desired: EffectRecord.done,
                                                ordering: .acquiringAndReleasing).exchanged {
                    if record.onFinish == nil { unregister(record) }
                    return record.onFinish != nil
                }
            default:
                return false
            }
        }
    }

    @usableFromInline
    func unregister(_ record: EffectRecord) {
        let entry = registry.withLock { $0.running.removeValue(forKey: ObjectIdentifier(record)) }
        _ = entry   // released here, after the lock
        if let effectEnded { effectEnded() }
    }

    /// Deliverer only: cancels `token` (taken out of the deliverer's table: nothing holding it is reduced
    /// from now on), stops the running effects that hold it, and returns their records, in the order they
    /// started (the caller runs their `onFinish`, which may start what comes next).
    @usableFromInline
    func cancel(_ token: CancelToken) -> [EffectRecord] {
        token.isCancelled.store(true, ordering: .relaxed)
        let victims = registry.withLock { registry -> [(record: EffectRecord, stopper: Stopper?, order: UInt64)] in
            var victims: [(record: EffectRecord, stopper: Stopper?, order: UInt64)] = []
            for (key, entry) in registry.running where entry.record.tokens.contains(where: { $0 === token }) {
                guard entry.record.phase.compareExchange(
                    expected: EffectRecord.registered, desired: EffectRecord.done,
                    ordering: .acquiringAndReleasing).exchanged else { continue }
                victims.append(entry)
                registry.running[key] = nil
            }
            return victims.sorted { $0.order < $1.order }
        }
        for victim in victims {
            victim.record.isCancelled.store(true, ordering: .releasing)
            victim.stopper?.stop()
        }
        if !victims.isEmpty, let effectEnded { effectEnded() }
        return victims.map(\.record)
    }

    /// Any thread: stops the running effects of the group of `completion` (a ``StoreTask/cancel()``).
    /// Their `onFinish` is not run: what would come next belongs to the cancelled group too.
    func cancel(group completion: EffectGroupCompletion) {
        let victims = registry.withLock { registry -> [(record: EffectRecord, stopper: Stopper?, order: UInt64)] in
            var victims: [(record: EffectRecord, stopper: Stopper?, order: UInt64)] = []
            for (key, entry) in registry.running {
                guard let group = entry.record.group, group.completion === completion,
                      entry.record.phase.compareExchange(
                        expected: EffectRecord.registered, desired: EffectRecord.done,
                        ordering: .acquiringAndReleasing).exchanged else { continue }
                victims.append(entry)
                registry.running[key] = nil
            }
            return victims
        }
        for victim in victims {
            victim.record.isCancelled.store(true, ordering: .releasing)
            victim.stopper?.stop()
        }
        if !victims.isEmpty, let effectEnded { effectEnded() }
    }

    /// Any thread, once: the store is gone; stops every running effect and refuses new ones.
    @usableFromInline
    func cancelAll() {
        // The records are freed after the lock.
        let all = registry.withLock { registry in
            registry.isClosed = true
            defer { registry.running = [:] }
            return Array(registry.running.values)
        }
        for entry in all {
            entry.record.isCancelled.store(true, ordering: .releasing)
            entry.stopper?.stop()
        }
    }
}

/// Where the start of a stream or task effect is, for the threads that send to it: a state machine in
/// one atomic word, whose steps say what the caller may do.
///
/// The start runs on the store's deliverer, which delivers nothing else until it ends, so the store's
/// queue holds still meanwhile. An action sent during the start, from any thread, is queued from inside
/// the machine's `sending` state (``enterSend()`` … ``leaveSend()``), which one sender holds at a time
/// and the end of the start waits for; so the fields the sink keeps for its start (the store it holds,
/// the action it may keep, the counts) have one owner at a time, and the actions keep the order they
/// were sent in. No thread identity is involved. Nothing in `sending` runs user code: a sender that
/// finds it taken waits for a queue append, never for a reduce.
///
/// ```
/// running --enterSend--> sending --leaveSend--> running --end--> over
/// ```
@usableFromInline
struct EffectStart: ~Copyable, Sendable {
    @usableFromInline static let running: UInt8 = 0
    @usableFromInline static let sending: UInt8 = 1
    @usableFromInline static let over: UInt8 = 2

    @usableFromInline let word = Atomic<UInt8>(EffectStart.running)

    @inlinable init() {}

    /// What a send does.
    @usableFromInline
    enum Route {
        /// The start runs: the caller owns the start's fields until it calls ``EffectStart/leaveSend()``.
        case duringStart
        /// The start is over: the caller dispatches to the store as any thread does.
        case afterStart
    }

    /// Any thread, sending: takes the start's fields if the start still runs.
    @inlinable @inline(__always)
    func enterSend() -> Route {
        while true {
            let (exchanged, original) = word.compareExchange(
                expected: EffectStart.running, desired: EffectStart.sending, ordering: .acquiring)
            if exchanged { return .duringStart }
            if original == EffectStart.over { return .afterStart }
            EffectStart.pause()
        }
    }

    /// The sender that entered: hands the start's fields back.
    @inlinable @inline(__always)
    func leaveSend() {
        word.store(EffectStart.running, ordering: .releasing)
    }

    /// The starting thread: the start is over, once no sender is inside it; from here on the start's
    /// fields are the starting thread's (then the deliverer's), and every send goes to the store.
    @inlinable @inline(__always)
    func end() {
        while !word.compareExchange(expected: EffectStart.running, desired: EffectStart.over,
                                    ordering: .acquiringAndReleasing).exchanged {
            EffectStart.pause()
        }
    }

    /// Whether the start is over.
    @inlinable
    var isOver: Bool { word.load(ordering: .acquiring) == EffectStart.over }

    /// The starting thread, for a sink that serves again: a new start.
    @inlinable
    func restart() {
        word.store(EffectStart.running, ordering: .relaxed)
    }

    /// Lets another thread finish its short step (a queue append) while this one waits for it.
    @usableFromInline @inline(never)
    static func pause() {
        sched_yield()
    }
}

/// One running leaf effect (a stream, a task, a single action) of a store.
///
/// Not final: a stream's or a task's record is its ``StoreSink``, so the two are one allocation.
/// Not `Sendable` itself, and nothing needs it to be: a record crosses threads only inside its runtime's
/// locked registry or as a ``StoreSink``, which says why that is safe (the record's own fields are
/// constants and atomics, and ``onFinish`` runs on the deliverer only).
@usableFromInline class EffectRecord {
    @usableFromInline
    static let starting: UInt8 = 0
    @usableFromInline
    static let registered: UInt8 = 1
    @usableFromInline
    static let done: UInt8 = 2

    /// The tokens of the ids the effect was made cancellable with, as they were when it started.
    @usableFromInline
    let tokens: [CancelToken]
    /// Starting, then registered (it outlived its start), then done (ended or cancelled).
    @usableFromInline
    let phase = Atomic<UInt8>(EffectRecord.starting)
    /// Set when the effect was stopped from outside (a cancel by id, the store's release).
    @usableFromInline
    let isCancelled = Atomic<Bool>(false)
    /// Run on the deliverer when the effect ended or was cancelled by id: what comes next in a
    /// concatenation, or the count of a merge.
    @usableFromInline
    let onFinish: (() -> Void)?
    /// The ``StoreTask`` group the effect belongs to, and with it the actions it sends and their effects.
    /// Set on the deliverer: when the record is made, and (for a record of the dispatch in progress,
    /// ``groupIsRoot``) just before it is registered, so before another thread can see it in the registry.
    @usableFromInline
    @exclusivity(unchecked) final var group: EffectGroup?
    /// Whether the record was made by the dispatch in progress on the deliverer (``Store/dispatch(_:)-(E)``),
    /// whose group is made only when one of its effects outlives its start.
    @usableFromInline
    @exclusivity(unchecked) final var groupIsRoot: Bool

    @usableFromInline
    init(tokens: [CancelToken], onFinish: (() -> Void)?, groupIsRoot: Bool, group: EffectGroup?) {
        self.tokens = tokens
        self.onFinish = onFinish
        self.groupIsRoot = groupIsRoot
        self.group = group
    }
}

/// Counts the children of a merged effect that are still running; deliverer only.
@usableFromInline
final class MergeCountdown {
    @usableFromInline
    var remaining: Int
    @usableFromInline
    let onFinish: () -> Void

    @usableFromInline
    init(_ remaining: Int, onFinish: @escaping () -> Void) {
        self.remaining = remaining
        self.onFinish = onFinish
    }

    @usableFromInline
    func childFinished() {
        remaining -= 1
        if remaining == 0 { onFinish() }
    }
}

/// The default place of an effect's error nobody handled: one line on standard error.
func writeEffectErrorToStandardError(_ error: any Error) {
    let line = "Stillwater: an effect failed with \(String(reflecting: error)), and the store has no onEffectError handler; pass one to Store(_:dependencies:middleware:onEffectError:) or catch the error in the effect.\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// Where a concatenation of effects is: its children, the next to start, and whether the loop that
/// starts them is running. Touched only on the store's deliverer (a child's `onFinish` runs there).
@usableFromInline
final class EffectSequence<Output> {
    @usableFromInline let children: [Effect<Output>]
    @usableFromInline let tokens: [CancelToken]
    @usableFromInline let onFinish: (() -> Void)?
    /// The group its children start in (the dispatch's group, made at once: a later child starts after
    /// the dispatch).
    @usableFromInline let group: EffectGroup?
    @usableFromInline var next = 0
    @usableFromInline var looping = false
    @usableFromInline var childEnded = false

    @inlinable
    init(_ children: [Effect<Output>], tokens: [CancelToken], onFinish: (() -> Void)?, group: EffectGroup?) {
        self.children = children
        self.tokens = tokens
        self.onFinish = onFinish
        self.group = group
    }
}

/// What a cancel of an id reaches: every effect started under the id since the id's last cancel holds
/// the same token, and a cancel marks it. An action such an effect sent is reduced only while its tokens
/// are not cancelled, even one already queued.
///
/// `isCancelled` is read and written on the store's deliverer only; it is atomic so that the type is
/// checked `Sendable` (relaxed loads and stores cost what plain ones do).
@usableFromInline
final class CancelToken: Sendable {
    @usableFromInline let id: EffectID
    @usableFromInline let isCancelled = Atomic<Bool>(false)

    @usableFromInline
    init(_ id: EffectID) { self.id = id }
}

/// A token in the runtime's table, which does not keep it alive.
@usableFromInline
struct WeakToken {
    @usableFromInline weak var token: CancelToken?

    @usableFromInline
    init(token: CancelToken) { self.token = token }
}
