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
/// property or store. The state need not be `Sendable`: the lock is what makes sharing it safe, which the
/// compiler's region analysis cannot see.
///
/// A thread that asks again for a lock it holds (such a body touching its own property or store) stops
/// with the lock's ``misuse`` message, which names the mistake and its fix, instead of waiting for
/// itself. The lock remembers its holder for that: one relaxed store when it is taken, one when it is
/// released, and one relaxed load before it is taken.
///
/// A `Lock` is `Sendable` whatever its state: the mutex is what makes sharing that state safe. So a class
/// whose stored properties are only locks and other `Sendable` values is checked `Sendable` with no
/// `@unchecked`.
///
/// `package` so that StillwaterTesting uses the same lock rather than a copy of it.
@usableFromInline
package struct Lock<State>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<UncheckedTransfer<State>>
    /// The thread holding the lock, or 0.
    @usableFromInline let holder = Atomic<UInt>(0)
    /// What a thread that asks again for the lock it holds is told before it stops.
    @usableFromInline let misuse: StaticString

    @inlinable
    package init(_ initialState: State, misuse: StaticString = Lock.reentered) {
        mutex = Mutex(UncheckedTransfer(value: initialState))
        self.misuse = misuse
    }

    /// The message of a lock with no more specific one.
    @usableFromInline
    package static var reentered: StaticString {
        "Stillwater: a thread asked again for a lock it holds; a body run under a Stillwater lock must not call back into the object that runs it."
    }

    /// Runs `body` with exclusive access to the protected state and returns what it returns.
    @inlinable @inline(__always)
    package borrowing func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let thread = currentThread()
        if holder.load(ordering: .relaxed) == thread { reenteredLock() }
        return try mutex.withLock { (state: inout sending UncheckedTransfer<State>) throws(Failure) in
            holder.store(thread, ordering: .relaxed)
            defer { holder.store(0, ordering: .relaxed) }
            return UncheckedTransfer(value: try body(&state.value))
        }.value
    }

    /// Stops the program with ``misuse``: the calling thread already holds this lock.
    @usableFromInline @inline(never)
    func reenteredLock() -> Never {
        fatalError(misuse.description)
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

/// Carries a value into or out of a `Mutex`.
///
/// `@unchecked Sendable`: the state of a ``Lock`` need not be `Sendable`; the mutex around it is what
/// makes sharing it safe.
@usableFromInline struct UncheckedTransfer<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable init(value: Value) { self.value = value }
}

/// A ``Lock`` in a class, for state that closures share.
@usableFromInline
final class SharedLock<State>: Sendable {
    @usableFromInline let lock: Lock<State>

    @inlinable
    init(_ initialState: State) {
        lock = Lock(initialState)
    }

    /// Runs `body` with exclusive access to the protected state.
    @inlinable
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock(body)
    }
}
