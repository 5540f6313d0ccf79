import Stillwater

/// StillwaterLive's lock is the engine's: one lock type serves the package (a `Synchronization.Mutex`
/// with the engine's check against a thread asking twice, and the happens-before edge that the thread
/// sanitizer needs to see a contended section's order; see "Locks and the thread sanitizer" in the
/// engine's article, `Sources/Stillwater/Internal/README.md`).
///
/// Callers say `state.withLock { … }` and never call user code inside the body.
/// A closure is kept in a field of a struct `State`, never as `State` itself (see `LiveHubShared.WriterStart`).
typealias LiveLock<State> = Lock<State>
