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

    @usableFromInline let source: Observable<Value>
    @usableFromInline let buffering: ValuesBuffering

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
    @inlinable
    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: ValuesChannel(source: source, buffering: buffering))
    }

    /// Hands out the stream's values one `next()` at a time.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let channel: ValuesChannel<Value>
        /// Cancels the channel when the last copy of this iterator is released. The subscription's
        /// observer holds the channel (strongly: a weak reference would cost a side table and atomic
        /// operations on every value), so the channel's own deinit cannot be what ends it.
        @usableFromInline let lifetime: Subscription
        /// Whether this iterator has asked its channel to subscribe (which the channel also knows: this
        /// only saves a lock per value).
        @usableFromInline var started = false

        @inlinable
        init(channel: ValuesChannel<Value>) {
            self.channel = channel
            lifetime = Subscription(channel)
        }

        /// The next value, `nil` after completion or cancellation; throws the stream's error.
        @inlinable
        public mutating func next() async throws(Failure) -> Value? {
            if !started {
                started = true
                channel.startIfNeeded()
            }
            do {
                return try await channel.next()
            } catch let error as Failure {
                throw error
            } catch {
                return nil
            }
        }
    }
}

/// The buffer between a subscription and an async iterator: one ``State`` under one lock.
///
/// The subscription's thread calls ``push(_:)`` and ``finish(_:)``; the iterating task calls ``next()``.
/// All of it is `@inlinable`, so it runs specialised in the module that iterates, for its value type:
/// unspecialised, every value made the runtime look up the generic metadata of the state, the lock and
/// the mutex around it (W12 in `Benchmarks/README.md`). Nothing else on the way of a value depends on
/// `Value`: the waiting task is resumed with nothing and takes what woke it from the state, and the end
/// is a ``Termination``.
@usableFromInline
final class ValuesChannel<Value: Sendable>: Cancellable, Sendable {
    /// What the lock guards, and every decision about it.
    @usableFromInline
    struct State {
        /// The values not taken yet, kept as the buffering policy says.
        @usableFromInline var buffer = ConsumingQueue<Value>()
        /// The value ``push(_:buffering:)`` handed to the waiting task, which takes it first when it
        /// runs: a value that woke the task is never dropped for a newer one.
        @usableFromInline var handed: Value?
        /// How the stream ended; `nil` while it runs. After a failure was thrown, `.completed`: the
        /// error is thrown once, then the iterator ends.
        @usableFromInline var end: Termination?
        /// The task waiting in ``next()``, if one is: ``waiterBox``, until `push` or `finish` claims it
        /// (sets this back to `nil`) to wake it. The task is resumed with nothing: it takes what woke it
        /// from here.
        @usableFromInline var waiter: ValuesWaiter?
        /// Where the waiting task's continuation is kept: one object per channel, used by every wait.
        @usableFromInline let waiterBox = ValuesWaiter()
        @usableFromInline var started = false

        @inlinable init() {}

        /// Whether ``take(waiting:)`` has something for the task: a value or the end.
        @inlinable var isReady: Bool { handed != nil || !buffer.isEmpty || end != nil }

        /// The next value, in order: the handed one, then the buffered ones. At the end, `nil` (or the
        /// stream's error, thrown once). With nothing ready, `nil` and `waiting` set.
        @inlinable mutating func take(waiting: inout Bool) throws(any Error) -> Value? {
            if let value = handed {
                handed = nil
                return value
            }
            if let value = buffer.popFirst() { return value }
            switch end {
            case nil:
                waiting = true
                return nil
            case .completed?:
                return nil
            case .failed(let error)?:
                end = .completed
                throw error
            }
        }

        /// Keeps `continuation` to be resumed when something arrives; false, keeping nothing, when
        /// something already has.
        @inlinable mutating func wait(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
            if isReady { return false }
            waiterBox.continuation = continuation
            waiter = waiterBox
            return true
        }

        /// Stores `value` for the task, as `buffering` says, or hands it to the waiting task, which is
        /// returned to be resumed. Values after the end are dropped.
        @inlinable mutating func push(_ value: Value, buffering: ValuesBuffering) -> ValuesWaiter? {
            guard end == nil else { return nil }
            if let waiter {
                self.waiter = nil
                handed = value
                return waiter
            }
            switch buffering {
            case .unbounded:
                buffer.append(value)
            case .newest(let limit):
                buffer.append(value, keepingNewest: limit)
            case .oldest(let limit):
                if buffer.count < limit { buffer.append(value) }
            }
            return nil
        }

        /// Records the end, unless the stream ended before; returns the waiting task to be resumed.
        @inlinable mutating func finish(_ termination: Termination) -> ValuesWaiter? {
            guard end == nil else { return nil }
            end = termination
            defer { waiter = nil }
            return waiter
        }
    }

    @usableFromInline let source: Observable<Value>
    @usableFromInline let buffering: ValuesBuffering
    @usableFromInline let state = Lock(State())
    @usableFromInline let upstream = SubscriptionSlot()

    @inlinable
    init(source: Observable<Value>, buffering: ValuesBuffering) {
        self.source = source
        self.buffering = buffering
    }

    deinit {
        upstream.cancel()
    }

    /// The next value, `nil` at the end or after the task was cancelled; throws the stream's error once.
    ///
    /// A value that is there already is taken under one lock, with no continuation. Otherwise the task
    /// waits, and takes what woke it when it runs again.
    @inlinable
    func next() async throws -> Value? {
        // A cancelled task stops the stream before taking anything, as the cancellation handler below
        // does for a task cancelled while it waits; what is buffered still comes out, then the end.
        if Task.isCancelled { cancel() }
        var waiting = false
        let value = try state.withLock { state throws(any Error) in try state.take(waiting: &waiting) }
        guard waiting else { return value }
        return try await withTaskCancellationHandler {
            try await waitForNext()
        } onCancel: {
            cancel()
        }
    }

    /// Waits until something arrives, then takes it: the value handed over, or the end.
    @inlinable
    func waitForNext() async throws -> Value? {
        while true {
            await withCheckedContinuation { continuation in
                let kept = state.withLock { $0.wait(continuation) }
                if !kept { continuation.resume() }
            }
            var waiting = false
            let value = try state.withLock { state throws(any Error) in try state.take(waiting: &waiting) }
            if !waiting { return value }
        }
    }

    /// How many values the storage holds, consumed ones not yet compacted included (for tests).
    var storedCount: Int {
        state.withLock { $0.buffer.storedCount }
    }

    /// Subscribes to the source, the first time only.
    @inlinable
    func startIfNeeded() {
        let start = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard start else { return }
        // The observer holds the channel until the subscription ends: when the stream ends, or when the
        // iterator's `lifetime` cancels it.
        upstream.replace(with: source.subscribe(Observer(
            next: { value in self.push(value) },
            end: { termination in self.finish(termination) }
        )))
    }

    /// Stores `value` for the task, or hands it to the waiting task and wakes it.
    @inlinable
    func push(_ value: Value) {
        let buffering = self.buffering
        state.withLock { $0.push(value, buffering: buffering) }?.resume()
    }

    /// Records the end and wakes the waiting task.
    @inlinable
    func finish(_ termination: Termination) {
        state.withLock { $0.finish(termination) }?.resume()
    }

    /// Ends the iterator (what is buffered still comes out first) and cancels the subscription.
    @inlinable
    func cancel() {
        finish(.completed)
        upstream.cancel()
    }
}

/// The task waiting in a ``ValuesChannel``: its continuation, in an object of its own.
///
/// A `CheckedContinuation`'s layout belongs to the Concurrency library, which may change it, so the
/// compiler does not know it: a ``ValuesChannel/State`` holding one would be tested, copied and reached
/// through runtime calls on every value, a task waiting or not. The state holds this object instead (a
/// reference, of known layout), and `push` only looks inside it to wake a task.
///
/// The continuation is written by the task that waits, under the channel's lock. Whoever wakes the task
/// claims the waiter under the same lock (``ValuesChannel/State/waiter`` back to `nil`), so from then
/// on only it reaches the object: ``resume()`` takes the continuation out before resuming it, and the
/// task can only wait again, and write here again, once resumed.
@usableFromInline
final class ValuesWaiter {
    @usableFromInline var continuation: CheckedContinuation<Void, Never>?

    @inlinable init() {}

    /// Wakes the waiting task; only by the one who claimed the waiter.
    @inlinable
    func resume() {
        let continuation = self.continuation
        self.continuation = nil
        continuation?.resume()
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
