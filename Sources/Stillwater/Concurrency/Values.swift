/// How ``ObservableValues`` stores values that arrive faster than the loop consumes them.
public enum ValuesBuffering: Sendable, Equatable {
    /// Keeps every value (the default): nothing is lost, memory grows while the consumer lags.
    case unbounded
    /// Keeps at most this many of the newest values, dropping the oldest ones.
    case newest(Int)
    /// Keeps at most this many of the oldest values, dropping new ones while full.
    case oldest(Int)
}

extension ObservableType where Value: Sendable {
    /// The stream's values as an `AsyncSequence`, for `for try await value in stream.values`.
    ///
    /// The loop ends when the stream completes and throws when it fails. The subscription starts with the
    /// first `next()` and ends when the loop ends, when the iterator is released, or when the task is
    /// cancelled (the loop then ends without an error). Values that arrive while the loop body runs are
    /// kept as `buffering` says (every value, by default).
    ///
    /// Buffering policy: the stream never waits for the loop (a subject's `send` does not block), so
    /// values that arrive while the body runs are stored. `values` keeps all of them, in order
    /// (``ValuesBuffering/unbounded``): nothing is lost, and memory grows while the loop lags behind a fast
    /// stream. ``values(buffering:)`` bounds that memory with ``ValuesBuffering/newest(_:)`` (drop the
    /// oldest, for state where only the latest matters) or ``ValuesBuffering/oldest(_:)`` (drop new values
    /// while full). The terminal event is never dropped: it is delivered after the stored values.
    ///
    /// ```swift
    /// let numbers = Observable.of(1, 2, 3)
    /// for try await value in numbers.values { print(value) }
    /// print("done")         // the loop ends when the stream completes
    /// // Prints "1", "2", "3", "done"
    /// ```
    public var values: ObservableValues<Value, any Error> {
        ObservableValues(source: asObservable(), buffering: .unbounded)
    }

    /// The stream's values as an `AsyncSequence` that keeps values as `buffering` says.
    ///
    /// For a server that pushes state to many clients, give each client its own loop over
    /// `values(buffering: .newest(1))` of the state it shows: a client that falls behind skips to the
    /// newest state instead of working through a queue of old ones.
    ///
    /// ```swift
    /// let board = BehaviorSubject(1)
    /// var pushed: [Int] = []
    /// for try await state in board.take(3).values(buffering: .newest(1)) {
    ///     pushed.append(state)                  // a slow socket write
    ///     if state == 1 { board.send(2); board.send(3) }
    /// }
    /// print(pushed)                             // 2 was superseded while 1 was being written
    /// // Prints "[1, 3]"
    /// ```
    ///
    /// - Note: The stream never waits for a loop. The thread that sends a value (the one calling `send` or
    ///   `dispatch`) only stores it in this loop's buffer, under a short lock, and wakes the loop; with
    ///   ``ValuesBuffering/newest(_:)`` that store replaces the oldest value when the buffer is full. The
    ///   loop body runs on the task that iterates, never on the sending thread. So a slow consumer costs
    ///   the senders and the other consumers nothing, its memory is bounded by the limit, and it sees the
    ///   newest values when it catches up. ``ValuesBuffering/unbounded`` keeps everything instead, and is
    ///   the wrong choice for a consumer that may lag forever.
    public func values(buffering: ValuesBuffering) -> ObservableValues<Value, any Error> {
        ObservableValues(source: asObservable(), buffering: buffering)
    }
}

/// A stream's values as an `AsyncSequence`; see ``ObservableType/values``.
public struct ObservableValues<Value: Sendable, Failure: Error>: AsyncSequence, Sendable {
    /// The type of the values.
    public typealias Element = Value

    let source: Observable<Value>
    let buffering: ValuesBuffering

    init(source: Observable<Value>, buffering: ValuesBuffering) {
        if case .newest(let limit) = buffering {
            precondition(limit > 0, "values(buffering: .newest(_:)) needs a limit of 1 or more, got \(limit).")
        }
        if case .oldest(let limit) = buffering {
            precondition(limit > 0, "values(buffering: .oldest(_:)) needs a limit of 1 or more, got \(limit).")
        }
        self.source = source
        self.buffering = buffering
    }

    /// Creates the iterator; each iterator subscribes on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: ValuesChannel(source: source, buffering: buffering))
    }

    /// Hands out the stream's values one `next()` at a time.
    public struct Iterator: AsyncIteratorProtocol {
        let channel: ValuesChannel<Value>

        /// The next value, `nil` after completion or cancellation; throws the stream's error.
        public mutating func next() async throws(Failure) -> Value? {
            let result = await channel.next()
            switch result {
            case .success(let value):
                return value
            case .failure(let error):
                if let error = error as? Failure { throw error }
                return nil
            }
        }
    }
}

/// The buffer between a subscription and an async iterator.
final class ValuesChannel<Value: Sendable>: Sendable {
    private struct State {
        var buffer = ConsumingQueue<Value>()
        var end: Result<Value?, any Error>?
        var waiter: CheckedContinuation<Result<Value?, any Error>, Never>?
        var started = false
    }

    private let source: Observable<Value>
    private let buffering: ValuesBuffering
    private let state = Lock(State())
    private let upstream = SubscriptionSlot()

    init(source: Observable<Value>, buffering: ValuesBuffering) {
        self.source = source
        self.buffering = buffering
    }

    deinit {
        upstream.cancel()
    }

    func next() async -> Result<Value?, any Error> {
        startIfNeeded()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Value?, any Error>? in
                    if let value = state.buffer.popFirst() {
                        return .success(value)
                    }
                    if let end = state.end {
                        state.end = .success(nil)
                        return end
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.finish(.success(nil))
            upstream.cancel()
        }
    }

    /// How many values the storage holds, consumed ones not yet compacted included (for tests).
    var storedCount: Int {
        state.withLock { $0.buffer.storedCount }
    }

    func startIfNeeded() {
        let start = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard start else { return }
        // The handler holds the channel weakly, so releasing the iterator releases the channel, whose
        // deinit cancels the subscription.
        upstream.replace(with: source.subscribe { [weak self] event in
            switch event {
            case .next(let value): self?.push(value)
            case .completed: self?.finish(.success(nil))
            case .error(let error): self?.finish(.failure(error))
            }
        })
    }

    private func push(_ value: Value) {
        let buffering = self.buffering
        let waiter = state.withLock { state -> CheckedContinuation<Result<Value?, any Error>, Never>? in
            guard state.end == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            switch buffering {
            case .unbounded:
                state.buffer.append(value)
            case .newest(let limit):
                state.buffer.append(value)
                if state.buffer.count > limit { _ = state.buffer.popFirst() }
            case .oldest(let limit):
                if state.buffer.count < limit { state.buffer.append(value) }
            }
            return nil
        }
        waiter?.resume(returning: .success(value))
    }

    private func finish(_ end: Result<Value?, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Value?, any Error>, Never>? in
            guard state.end == nil else { return nil }
            state.end = end
            let waiter = state.waiter
            state.waiter = nil
            if waiter != nil { state.end = .success(nil) }
            return waiter
        }
        waiter?.resume(returning: end)
    }
}

extension Property where Value: Sendable {
    /// The current value and its changes as an `AsyncSequence` that never throws.
    public var values: ObservableValues<Value, Never> {
        ObservableValues(source: asObservable(), buffering: .unbounded)
    }
}

extension MutableProperty where Value: Sendable {
    /// The current value and its changes as an `AsyncSequence` that never throws.
    public var values: ObservableValues<Value, Never> {
        ObservableValues(source: asObservable(), buffering: .unbounded)
    }
}
