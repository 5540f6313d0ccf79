import Synchronization

/// This library's lock: a `Mutex` over state that need not be `Sendable` (the lock is what makes sharing
/// it safe). Callers never run user code inside `withLock`.
struct Locked<State>: ~Copyable {
    private let mutex: Mutex<UncheckedBox<State>>

    init(_ state: State) {
        mutex = Mutex(UncheckedBox(state))
    }

    /// Runs `body` with exclusive access to the state and returns what it returns.
    borrowing func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        mutex.withLock { box in UncheckedBox(body(&box.value)) }.value
    }
}

/// Carries a value into or out of a `Mutex`.
struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
