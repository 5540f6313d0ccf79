import Synchronization

/// The serialising heart of every source: at most one thread delivers at a time, and work that arrives
/// meanwhile (from another thread, or reentrantly from inside an observer) is queued for that thread.
///
/// The thread that wins ``tryAcquire()`` (or whose ``enqueue(_:)`` returns `true`) is the *deliverer*. It
/// owns the source's delivery state exclusively, without a lock, until ``releaseOrTake(_:)`` returns
/// `false`. Nobody waits: a sender that finds a delivery in progress appends its work and returns, and the
/// deliverer runs it after the current item has reached every observer. This gives, with one mechanism,
/// thread safety (one observer never sees two events at once), one order for all observers, and reentrancy
/// without nesting or stack growth.
///
/// Cost on the uncontended path: one compare-and-swap to acquire and one to release, no lock. Under
/// contention a sender takes the short `pending` lock to append its work (and the deliverer takes it to
/// collect the work): nobody ever waits for a *delivery*, only, briefly, for another thread's append. So
/// the queue is lock-free on the fast path and uses a lock, never held while user code runs, when
/// threads meet.
///
/// The pending work itself lies in the queue's owner (a source, a serializer, a dispatcher), which
/// appends and collects it in the closures it passes here, run under `pending`: the work of a source or
/// serializer holds values and observers that are not `Sendable`, so it stays under the owner's rule
/// that says why sharing it is safe rather than behind a lock that would claim it.
///
/// The status word: `0` idle, `1` a deliverer is running, `2` a deliverer is running and work is pending.
///
/// Debug builds also remember the deliverer's thread, so that state owned by the deliverer can check its
/// rule (``checkOwned(_:)``); release builds keep no such field.
@usableFromInline
struct DeliveryQueue: ~Copyable, Sendable {
    @usableFromInline let status = Atomic<Int>(0)
    /// Held while the owner appends to or collects its pending work.
    @usableFromInline let pending = Lock(())
    #if DEBUG
    /// The deliverer's thread (``currentThread()``), or 0 when nobody delivers. Debug builds only.
    @usableFromInline let owner = Atomic<UInt>(0)
    #endif

    @inlinable init() {}

    /// Becomes the deliverer when nobody is delivering. Returns `false` without waiting otherwise.
    @inlinable @inline(__always)
    func tryAcquire() -> Bool {
        let acquired = status.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
        #if DEBUG
        if acquired { owner.store(currentThread(), ordering: .relaxed) }
        #endif
        return acquired
    }

    /// Stops the program with `rule` unless the calling thread is the deliverer. Debug builds only;
    /// compiles to nothing in release builds.
    @inlinable @inline(__always)
    func checkOwned(_ rule: StaticString) {
        #if DEBUG
        if owner.load(ordering: .relaxed) != currentThread() { brokenRule(rule) }
        #endif
    }

    /// Whether work waits to be taken (the status is 2). Meaningful to the deliverer: while it delivers,
    /// only it takes work, so a `true` stays true until it does.
    @inlinable @inline(__always)
    var hasPending: Bool {
        status.load(ordering: .acquiring) == 2
    }

    /// Queues work for the deliverer: `append` adds it to the owner's pending work, under the `pending`
    /// lock. Returns `true` when the caller became the deliverer itself (nobody was delivering), in which
    /// case it must run ``releaseOrTake(_:)`` until that returns `false`: the first call hands it the work
    /// it queued.
    @inlinable
    func enqueue(_ append: () -> Void) -> Bool {
        pending.withLock { _ in append() }
        var current = status.load(ordering: .sequentiallyConsistent)
        while true {
            switch current {
            case 0:
                // Become the deliverer with work pending (2), so `releaseOrTake` hands the work over.
                let (exchanged, original) = status.compareExchange(
                    expected: 0, desired: 2, ordering: .sequentiallyConsistent)
                if exchanged {
                    #if DEBUG
                    owner.store(currentThread(), ordering: .relaxed)
                    #endif
                    return true
                }
                current = original
            case 1:
                let (exchanged, original) = status.compareExchange(
                    expected: 1, desired: 2, ordering: .sequentiallyConsistent)
                if exchanged { return false }
                current = original
            default:
                return false
            }
        }
    }

    /// Deliverer only, while work is pending (``hasPending``): runs `insert`, which puts work before the
    /// owner's pending work (work that was sent before it but held back), under the `pending` lock.
    @inlinable
    func enqueueAhead(_ insert: () -> Void) {
        pending.withLock { _ in insert() }
    }

    /// Called by the deliverer when it has finished its current work. Either releases the queue and returns
    /// `false`, or runs `take`, which moves the owner's pending work into the deliverer's (empty) buffer,
    /// under the `pending` lock, and returns `true`: the caller is still the deliverer and must run that
    /// work, then call this again.
    @inlinable @inline(__always)
    func releaseOrTake(_ take: () -> Void) -> Bool {
        #if DEBUG
        // Cleared before the release: once the status is 0, another thread may become the deliverer.
        let thread = owner.exchange(0, ordering: .relaxed)
        if status.compareExchange(expected: 1, desired: 0, ordering: .releasing).exchanged { return false }
        owner.store(thread, ordering: .relaxed)
        #else
        if status.compareExchange(expected: 1, desired: 0, ordering: .releasing).exchanged { return false }
        #endif
        return takePending(take)
    }

    @inlinable
    func takePending(_ take: () -> Void) -> Bool {
        // Status is 2, and only the deliverer moves it away from 2.
        status.store(1, ordering: .sequentiallyConsistent)
        pending.withLock { _ in take() }
        return true
    }
}

/// Stops the program with `rule`, an engine rule the calling code broke.
@usableFromInline @inline(never)
func brokenRule(_ rule: StaticString) -> Never {
    fatalError(rule.description)
}
