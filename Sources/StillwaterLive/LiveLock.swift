import Foundation
import Synchronization

/// StillwaterLive's one lock: a `Synchronization.Mutex` that holds the state (so the compiler checks
/// that sharing it is safe), taken inside an `NSLock`.
///
/// The `NSLock` is there for the thread sanitizer. On Linux a contended `Mutex` is taken and released
/// inside the kernel (priority-inheriting futexes), where the sanitizer cannot see the order it makes, so
/// every contended section of a `Mutex` alone is reported as a data race. The `NSLock` is a pthread
/// mutex, which the sanitizer intercepts: it orders the same sections visibly. Uncontended, it costs one
/// more lock and unlock per section; no figure is claimed for it.
///
/// Callers say `state.withLock { … }` and never call user code inside the body.
/// A closure is kept in a field of a struct `State`, never as `State` itself (see `LiveHubShared.WriterStart`).
struct LiveLock<State: Sendable>: ~Copyable, Sendable {
    private let mutex: Mutex<State>
    private let order = NSLock()

    init(_ initial: State) {
        mutex = Mutex(initial)
    }

    /// Runs `body` with exclusive access to the state.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        order.lock()
        defer { order.unlock() }
        return try mutex.withLock { try body(&$0) }
    }
}
