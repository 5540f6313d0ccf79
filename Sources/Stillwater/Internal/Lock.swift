import Synchronization

/// The package's one lock wrapper: a `Synchronization.Mutex` that hands its protected state to a closure.
///
/// Every lock in Stillwater is a `Lock`. Callers say `state.withLock { … }`; observers are never called
/// while a `Lock` is held (decide under the lock, deliver outside it). Two user bodies do run under a lock,
/// because they change a value in place and a copy would cost more: `MutableProperty.modify(_:)` and
/// `Action.reduce(_:)`; both are documented not to touch their own property or store. The state need not be `Sendable`:
/// the lock is what makes sharing it safe, which the compiler's region analysis cannot see.
///
/// `package` so that StillwaterTesting uses the same lock rather than a copy of it.
@usableFromInline
package struct Lock<State>: ~Copyable {
    @usableFromInline let mutex: Mutex<UncheckedTransfer<State>>

    @inlinable
    package init(_ initialState: State) {
        mutex = Mutex(UncheckedTransfer(value: initialState))
    }

    /// Runs `body` with exclusive access to the protected state and returns what it returns.
    @inlinable @inline(__always)
    package borrowing func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try mutex.withLock { (state: inout sending UncheckedTransfer<State>) throws(Failure) in
            UncheckedTransfer(value: try body(&state.value))
        }.value
    }
}

/// Carries a value into or out of a `Mutex`. The lock itself provides the synchronisation.
@usableFromInline
struct UncheckedTransfer<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable init(value: Value) { self.value = value }
}

/// A ``Lock`` in a class, for state that closures share.
@usableFromInline
final class SharedLock<State>: @unchecked Sendable {
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
