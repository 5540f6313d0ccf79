extension ObservableType where Value: Sendable {
    /// Waits for the stream's first value.
    ///
    /// ```swift
    /// let reply = BehaviorSubject("ready")
    /// print(try await reply.first() ?? "none")
    /// // Prints "ready"
    /// ```
    ///
    /// - Returns: The first value, or `nil` when the stream completes without one.
    /// - Throws: The stream's error if it fails first; `CancellationError` if the task is cancelled
    ///   while waiting. Either way, and once the value arrived, the subscription is cancelled.
    public func first() async throws -> Value? {
        try await firstValue(where: { _ in true })
    }

    /// Waits for the first value that satisfies `predicate`.
    ///
    /// ```swift
    /// let progress = Observable.of(0, 25, 50, 75, 100)
    /// let half = try await progress.firstValue(where: { $0 >= 50 })
    /// print(half ?? -1)
    /// // Prints "50"
    /// ```
    ///
    /// - Parameter predicate: Called with each value, on the thread that delivers it, until it returns
    ///   `true`.
    /// - Returns: The first matching value, or `nil` when the stream completes without one.
    /// - Throws: The stream's error if it fails first; `CancellationError` if the task is cancelled
    ///   while waiting. Either way, and once the value arrived, the subscription is cancelled.
    public func firstValue(where predicate: @escaping (Value) -> Bool) async throws -> Value? {
        let waiter = FirstValueWaiter<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.install(continuation) else { return }
                waiter.subscription.replace(with: self.subscribe { event in
                    switch event {
                    case .next(let value):
                        if predicate(value) { waiter.resolve(.success(value)) }
                    case .completed:
                        waiter.resolve(.success(nil))
                    case .error(let error):
                        waiter.resolve(.failure(error))
                    }
                })
            }
        } onCancel: {
            waiter.resolve(.failure(CancellationError()))
        }
    }
}

/// The meeting point of a subscription and the task that awaits its first value: resumes the task once,
/// with whichever comes first (a value, the end of the stream, or the task's cancellation), then cancels
/// the subscription.
final class FirstValueWaiter<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value?, any Error>?
        /// Set when cancellation won before the continuation was installed.
        var early: Result<Value?, any Error>?
        var isResolved = false
    }

    private let state = Lock(State())
    let subscription = SubscriptionSlot()

    /// Installs the continuation. Returns `false` (after resuming it) when the task was already
    /// cancelled, so the caller must not subscribe.
    func install(_ continuation: CheckedContinuation<Value?, any Error>) -> Bool {
        let early = state.withLock { state -> Result<Value?, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// Resumes the waiting task with `result`, the first time only, and cancels the subscription.
    func resolve(_ result: Result<Value?, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Value?, any Error>? in
            guard !state.isResolved else { return nil }
            state.isResolved = true
            guard let continuation = state.continuation else {
                state.early = result
                return nil
            }
            state.continuation = nil
            return continuation
        }
        subscription.cancel()
        continuation?.resume(with: result)
    }
}
