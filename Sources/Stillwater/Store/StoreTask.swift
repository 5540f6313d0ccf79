import Synchronization

/// The effects one dispatch of an ``EffectAction`` started, and the effects that the actions they sent
/// started in turn: await them with ``finish()``, or stop them with ``cancel()``.
///
/// `store.dispatch(_:)` of an effect action returns one (it is `@discardableResult`: ignore it when you
/// do not need it). The action itself is reduced as always, before `dispatch` returns when nothing else
/// is being reduced.
///
/// ```swift
/// enum Save: EffectAction {
///     case save, saved(Int)
///     func reduce(into log: inout [String]) -> Effect<Save> {
///         switch self {
///         case .save:
///             log.append("saving")
///             return .run { send, _ in send(.saved(3)) }
///         case .saved(let bytes):
///             log.append("saved \(bytes) bytes")
///             return .none
///         }
///     }
/// }
/// let store = Store([String]())
/// await store.dispatch(Save.save).finish()
/// print(store.state.value)
/// // Prints "[\"saving\", \"saved 3 bytes\"]"
/// ```
///
/// What belongs to the task: every effect the action's reduce returned, every action those effects send
/// (reduced before `finish` returns), and every effect those actions return, however deep. An effect
/// that another dispatch started does not, even when it runs at the same time.
///
/// - Note: A dispatch whose effects all end during the dispatch itself (`.none`, `.send`, a stream that
///   delivers at once) returns a task that is already finished; it costs no allocation. A task whose
///   effects outlive the dispatch costs two.
public struct StoreTask: Sendable {
    @usableFromInline let completion: EffectGroupCompletion?

    @usableFromInline
    init(_ completion: EffectGroupCompletion?) {
        self.completion = completion
    }

    /// Waits until every effect of the task has ended (by itself, by a cancel, or because the store was
    /// released) and every action they sent was reduced.
    ///
    /// Cancelling the task that awaits `finish()` cancels the effects (as ``cancel()``), then keeps
    /// waiting for them to stop.
    public func finish() async {
        guard let completion else { return }
        await withTaskCancellationHandler {
            await completion.wait()
        } onCancel: {
            completion.cancel()
        }
    }

    /// Cancels every effect of the task that is still running: their streams are unsubscribed and their
    /// tasks cancelled, and no action they send from now on is reduced. Effects that other dispatches
    /// started are left alone. Safe from any thread, and more than once.
    public func cancel() {
        completion?.cancel()
    }

    /// Whether ``cancel()`` was called (directly, or by cancelling a task awaiting ``finish()``).
    public var isCancelled: Bool {
        completion?.isCancelled.load(ordering: .acquiring) ?? false
    }

    /// Whether every effect of the task has ended.
    public var hasFinished: Bool {
        completion?.state.withLock { $0.ended } ?? true
    }
}

/// The group of effects of one ``StoreTask``: held by every record of the group (and by the queued
/// actions, through their records), so it is released when the last of them is. Its release is the end
/// of the task.
@usableFromInline
final class EffectGroup: Sendable {
    @usableFromInline let completion: EffectGroupCompletion

    @usableFromInline
    init(runtime: EffectRuntime) {
        completion = EffectGroupCompletion(runtime: runtime)
    }

    deinit {
        completion.end()
    }
}

/// What a ``StoreTask`` holds: whether its group ended, whether it was cancelled, and who waits.
@usableFromInline
final class EffectGroupCompletion: Sendable {
    struct State {
        var ended = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let runtime: EffectRuntime
    let state = Lock(State())
    @usableFromInline let isCancelled = Atomic<Bool>(false)

    init(runtime: EffectRuntime) {
        self.runtime = runtime
    }

    /// The group was released: every effect ended. Resumes the waiters.
    func end() {
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state in
                if !state.ended { state.waiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }

    func cancel() {
        guard !isCancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        runtime.cancel(group: self)
    }
}
