import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one lock wrapper: a `Synchronization.Mutex` that hands its protected state to a closure.
///
/// Every lock in Stillwater is a `Lock`. Callers say `state.withLock { … }`; observers are never called
/// while a `Lock` is held (decide under the lock, deliver outside it). Some user code does run under a
/// lock, because it works on a value in place and a copy would cost more: the bodies of
/// `MutableProperty.modify(_:)` and `Action.reduce(_:)`, and, during a store's dispatch, each scope's key
/// path and its slice's `==` (read where the new state lies); all are documented not to touch their own
/// property or store.
///
/// The state is handed across as `Mutex` hands it: `init` takes it `sending`, and `withLock`'s body gets
/// it `inout sending` and returns a `sending` result, so the compiler checks that what goes into the state
/// is no longer the caller's and what comes out is no longer the state's. A `Sendable` state needs no
/// such check, and its `withLock` takes a plain body. State that must take in what callers keep (an
/// observer, a user's closure) goes in a ``LockedBox`` instead, which is not `Sendable`.
///
/// A thread that asks again for a lock it holds (such a body touching its own property or store) stops
/// with the lock's ``misuse`` message, which names the mistake and its fix, instead of waiting for
/// itself. The lock remembers its holder for that: one relaxed load before it is taken, an acquiring
/// load and a relaxed store once it is taken, and a releasing store before it is released.
///
/// Those last two are also the thread sanitizer's answer: they order each holder's section after the
/// previous one where the sanitizer can see it, which a contended `Mutex` alone does not on Linux
/// (see ``enter(_:)``, and "Locks and the thread sanitizer" in the engine's article). So the same lock
/// serves StillwaterLive (its `LiveLock` is this type) with no second lock around it.
///
/// A `Lock` is `Sendable` whatever its state, as a `Mutex` is: the hand-over is checked at each call. So a
/// class whose stored properties are only locks and other `Sendable` values is checked `Sendable` with no
/// `@unchecked`.
///
/// `package` so that StillwaterTesting and StillwaterLive use the same lock rather than a copy of it.
@usableFromInline
package struct Lock<State>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<State>
    /// The thread holding the lock, or 0.
    @usableFromInline let holder = Atomic<UInt>(0)
    /// What a thread that asks again for the lock it holds is told before it stops.
    @usableFromInline let misuse: StaticString

    @inlinable
    package init(_ initialState: sending State, misuse: StaticString = Lock.reentered) {
        mutex = Mutex(initialState)
        self.misuse = misuse
    }

    /// The message of a lock with no more specific one.
    @usableFromInline
    package static var reentered: StaticString {
        "Stillwater: a thread asked again for a lock it holds; a body run under a Stillwater lock must not call back into the object that runs it."
    }

    /// Runs `body` with exclusive access to the protected state and returns what it returns, as
    /// `Mutex.withLock` does: the state is handed to `body` as `inout sending` and the result comes back
    /// `sending`, so the compiler checks that nothing `body` stores in the state stays reachable from the
    /// caller and that nothing it returns stays reachable from the state.
    @inlinable @inline(__always)
    package borrowing func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let thread = currentThread()
        if holder.load(ordering: .relaxed) == thread { reenteredLock() }
        return try mutex.withLock { (state: inout sending State) throws(Failure) -> sending Result in
            enter(thread)
            defer { leave() }
            return try body(&state)
        }
    }

    /// The mutex was just taken by `thread`: records the holder, after an acquiring load of the word the
    /// previous holder released (see ``leave()``).
    ///
    /// The load is the thread sanitizer's edge. On Linux a contended `Mutex` is handed from one thread
    /// to the next inside the kernel (a priority-inheriting futex), where the sanitizer cannot see it, so
    /// without an edge it sees two holders' sections unordered and reports a data race. The releasing
    /// store in ``leave()`` and this acquiring load order every section after the one before it, in
    /// code the sanitizer instruments, for any thread and any contention. On x86-64 both compile to
    /// plain moves; on arm64 they are `ldar` and `stlr`.
    @inlinable @inline(__always)
    func enter(_ thread: UInt) {
        _ = holder.load(ordering: .acquiring)
        holder.store(thread, ordering: .relaxed)
    }

    /// The holder is about to release the mutex: clears the holder with a releasing store, which the
    /// next holder's ``enter(_:)`` loads.
    @inlinable @inline(__always)
    func leave() {
        holder.store(0, ordering: .releasing)
    }

    /// Stops the program with ``misuse``: the calling thread already holds this lock.
    @usableFromInline @inline(never)
    func reenteredLock() -> Never {
        fatalError(misuse.description)
    }
}

extension Lock where State: Sendable {
    /// Runs `body` with exclusive access to the protected state and returns what it returns.
    ///
    /// For a `Sendable` state nothing needs handing over: the state may be shared anyway, so `body` may
    /// store what the caller holds and return what it likes. The result never crosses a thread: it is made
    /// and returned on the calling thread.
    @inlinable @inline(__always)
    package borrowing func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let thread = currentThread()
        if holder.load(ordering: .relaxed) == thread { reenteredLock() }
        var result: Result?
        try mutex.withLock { (state: inout sending State) throws(Failure) in
            enter(thread)
            defer { leave() }
            result = try body(&state)
        }
        // `body` ran: the mutex runs its closure exactly once.
        return result!
    }
}

/// The calling thread's identity, as a number no other live thread has (never 0).
@inlinable @inline(__always)
func currentThread() -> UInt {
    // `pthread_t` is an integer on Glibc and a pointer on Darwin and Musl.
    #if canImport(Glibc)
    UInt(pthread_self())
    #else
    UInt(bitPattern: pthread_self())
    #endif
}

/// A ``Lock`` in a class, for state that closures share.
@usableFromInline
final class SharedLock<State>: Sendable {
    @usableFromInline let lock: Lock<State>

    @inlinable
    init(_ initialState: sending State) {
        lock = Lock(initialState)
    }

    /// Runs `body` with exclusive access to the protected state.
    @inlinable
    func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        try lock.withLock(body)
    }
}

extension SharedLock where State: Sendable {
    /// Runs `body` with exclusive access to the protected state, as ``Lock``'s `withLock` for a `Sendable`
    /// state.
    @inlinable
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock(body)
    }
}

/// A ``Lock`` and the state it guards, for state that is not `Sendable`: closures and observers of an
/// operator, values of a generic type.
///
/// `Lock` hands its state across as `Mutex` does (`inout sending`), so such state cannot go in one: what
/// the caller stores stays reachable from the caller. A `LockedBox` is therefore not `Sendable`, so the
/// compiler lets it reach another thread only where an object that says why that is safe carries it: an
/// operator's observers and subscription (``Observable``'s recipe, a ``Subscription``'s target).
///
/// `package` so that StillwaterTesting uses it too.
@usableFromInline
package final class LockedBox<State> {
    @usableFromInline let lock: Lock<Void>
    /// Under `lock`, which makes the runtime's exclusivity check redundant.
    @usableFromInline @exclusivity(unchecked) var state: State

    @inlinable
    package init(_ initialState: State) {
        lock = Lock(())
        state = initialState
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try lock.withLock { (_: inout Void) throws(Failure) -> Result in try body(&state) }
    }
}
