import Synchronization
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The name of a handler registered with a ``Dispatcher``, used to unregister it and to wait for it.
public struct DispatchToken: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The token's number, increasing in registration order.
    public let id: Int

    /// Orders tokens by registration.
    public static func < (lhs: DispatchToken, rhs: DispatchToken) -> Bool { lhs.id < rhs.id }

    /// `#` followed by the number, for example `#3`.
    public var description: String { "#\(id)" }
}

/// What went wrong in a ``Dispatcher/waitFor(_:)-([DispatchToken])``.
public enum DispatchError: Error, Equatable, CustomStringConvertible {
    /// Handlers wait for each other in a circle. The tokens are listed along the circle, starting and
    /// ending with the handler that was waited for while it was still running: `[#1, #2, #1]` means #1
    /// waits for #2, which waits for #1.
    case circularWait([DispatchToken])
    /// `waitFor` named a token that is not registered.
    case unknownToken(DispatchToken)
    /// `waitFor` was called outside a handler, while no payload was being dispatched on this thread.
    case notDispatching

    /// A sentence that names the tokens involved.
    public var description: String {
        switch self {
        case .circularWait(let tokens):
            "circular waitFor: \(tokens.map(\.description).joined(separator: " waits for ")); "
                + "break the circle so that one of these handlers does not wait for the others"
        case .unknownToken(let token):
            "waitFor(\(token)): no handler is registered with this token"
        case .notDispatching:
            "waitFor was called outside a handler; call it only while the dispatcher runs your handler"
        }
    }
}

/// The Flux dispatcher: it sends every payload to every registered handler, one payload at a time, and
/// lets a handler wait for others to run first.
///
/// ```swift
/// let dispatcher = Dispatcher<String>()
/// let first = MutableProperty<DispatchToken?>(nil)
/// let second = dispatcher.register { payload in
///     try dispatcher.waitFor(first.value!)
///     print("second \(payload)")
/// }
/// first.value = dispatcher.register { print("first \($0)") }
/// try dispatcher.dispatch("go")
/// // Prints "first go"
/// // Prints "second go"
/// ```
///
/// Handlers run in registration order, each once per payload; ``waitFor(_:)-([DispatchToken])`` runs the
/// named handlers first (unless they already ran). A payload dispatched from inside a handler, or from
/// another thread during a dispatch, is queued and dispatched after the current one, by the thread that is
/// dispatching. A circular wait never hangs or crashes: the `waitFor` that closes the circle throws
/// ``DispatchError/circularWait(_:)``, naming the tokens.
///
/// Payloads cross threads (one dispatched from another thread during a dispatch is handed to the thread
/// that dispatches), so they are `Sendable`. The handlers run on the dispatching thread, one at a time,
/// whichever thread registered them, so they are `@Sendable` too: state they share with the code around
/// them lives in a `Sendable` place (a `MutableProperty` of a `Sendable` value, a `Mutex`).
public final class Dispatcher<Payload: Sendable>: Sendable {
    typealias Handler = @Sendable (Payload) throws -> Void

    struct Registry {
        var handlers: [(token: DispatchToken, handler: Handler)] = []
        var nextID = 1
    }

    /// The state of the payload being dispatched; used by the dispatching thread.
    struct Round {
        var payload: Payload
        var handlers: [DispatchToken: Handler]
        var finished: Set<DispatchToken> = []
        /// The handlers running now, innermost last (a handler runs inside another's `waitFor`).
        var running: [DispatchToken] = []
    }

    let registry = Lock(Registry())
    let queue = DeliveryQueue()
    /// The payloads dispatched while another dispatch ran, oldest first, for the dispatching thread.
    let waiting = Lock<[Payload]>([])
    /// The payload being dispatched, under a lock taken briefly around each step (never while a handler
    /// runs), so that the type is checked `Sendable`.
    let round = Lock<Round?>(nil, misuse: "Stillwater: a Dispatcher's round was locked twice by one thread")
    /// The thread that dispatches now, so `waitFor` from elsewhere is refused.
    let dispatchingThread = Atomic<UInt>(0)

    /// Creates a dispatcher with no handlers.
    public init() {}

    /// Registers `handler` for every payload dispatched from now on.
    ///
    /// A handler registered during a dispatch first runs for the next payload.
    ///
    /// - Returns: The token that names the handler for ``unregister(_:)`` and ``waitFor(_:)-([DispatchToken])``.
    @discardableResult
    public func register(_ handler: @escaping @Sendable (Payload) throws -> Void) -> DispatchToken {
        registry.withLock { registry in
            let token = DispatchToken(id: registry.nextID)
            registry.nextID += 1
            registry.handlers.append((token, handler))
            return token
        }
    }

    /// Removes the handler named by `token`. Unregistering during a dispatch stops it from running for the
    /// rest of the current payload if it has not run yet. An unknown token is ignored.
    public func unregister(_ token: DispatchToken) {
        registry.withLock { $0.handlers.removeAll { $0.token == token } }
        if isDispatchingOnThisThread { round.withLock { $0?.handlers[token] = nil } }
    }

    /// Sends `payload` to every registered handler, or queues it when a dispatch is in progress.
    ///
    /// Every handler runs even when an earlier one throws. The first error thrown while this call ran
    /// handlers (for this payload, or for payloads queued meanwhile) is rethrown when it is done. A call
    /// that only queued its payload returns at once, and the errors of that payload reach the call that
    /// runs it.
    public func dispatch(_ payload: Payload) throws {
        guard queue.enqueue({ waiting.withLock { $0.append(payload) } }) else { return }
        dispatchingThread.store(Self.currentThread, ordering: .relaxed)
        var firstError: (any Error)?
        var pending: [Payload] = []
        while queue.releaseOrTake({ waiting.withLock { swap(&$0, &pending) } }) {
            // Another thread may be the next to dispatch once the queue is released; mark it ours again.
            dispatchingThread.store(Self.currentThread, ordering: .relaxed)
            for payload in pending {
                if let error = run(payload), firstError == nil { firstError = error }
            }
            pending.removeAll(keepingCapacity: true)
            dispatchingThread.store(0, ordering: .relaxed)
        }
        if let firstError { throw firstError }
    }

    /// Runs the handlers named by `tokens` now, before the rest of the calling handler, unless they already
    /// ran for this payload. Call it only from inside a handler.
    ///
    /// - Throws: ``DispatchError/circularWait(_:)`` when a named handler is running (it waits, directly or
    ///   through others, for the caller); ``DispatchError/unknownToken(_:)`` when a token is not
    ///   registered; ``DispatchError/notDispatching`` outside a handler; and whatever a named handler
    ///   throws.
    public func waitFor(_ tokens: [DispatchToken]) throws {
        guard isDispatchingOnThisThread else { throw DispatchError.notDispatching }
        for token in tokens {
            let error: DispatchError?? = round.withLock { round in
                guard let current = round else { return .some(.notDispatching) }
                if current.finished.contains(token) { return .none }
                if let index = current.running.firstIndex(of: token) {
                    return .some(.circularWait(Array(current.running[index...]) + [token]))
                }
                guard current.handlers[token] != nil else { return .some(.unknownToken(token)) }
                return .some(nil)
            }
            switch error {
            case .none: continue                          // already ran for this payload
            case .some(.some(let error)): throw error
            case .some(.none): try invoke(token)
            }
        }
    }

    /// Runs the handlers named by `tokens` first; see ``waitFor(_:)-([DispatchToken])``.
    public func waitFor(_ tokens: DispatchToken...) throws {
        try waitFor(tokens)
    }

    /// Whether a payload is being dispatched (on any thread).
    public var isDispatching: Bool {
        dispatchingThread.load(ordering: .relaxed) != 0
    }

    // MARK: Dispatching (the dispatching thread only)

    func run(_ payload: Payload) -> (any Error)? {
        let handlers = registry.withLock { $0.handlers }
        round.withLock {
            $0 = Round(payload: payload,
                       handlers: Dictionary(uniqueKeysWithValues: handlers.map { ($0.token, $0.handler) }))
        }
        defer { round.withLock { $0 = nil } }
        var firstError: (any Error)?
        for token in handlers.map(\.token) {
            let due = round.withLock { round in
                round.map { !$0.finished.contains(token) && $0.handlers[token] != nil } ?? false
            }
            guard due else { continue }
            do {
                try invoke(token)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        return firstError
    }

    /// Runs one handler, marking it running, then finished (even when it throws). The handler runs
    /// outside the lock.
    func invoke(_ token: DispatchToken) throws {
        let call: (Handler, Payload)? = round.withLock { round in
            guard let handler = round?.handlers[token], let payload = round?.payload else { return nil }
            round?.running.append(token)
            return (handler, payload)
        }
        guard let (handler, payload) = call else { return }
        defer {
            round.withLock { round in
                round?.running.removeLast()
                round?.finished.insert(token)
            }
        }
        try handler(payload)
    }

    var isDispatchingOnThisThread: Bool {
        dispatchingThread.load(ordering: .relaxed) == Self.currentThread
    }

    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
