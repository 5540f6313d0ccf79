import Synchronization

extension Store {
    /// Reduces the effect action `action` now, or queues it behind the delivery in progress, then starts
    /// the effect its ``EffectAction/reduce(into:)`` returned.
    ///
    /// The same queue as ``dispatch(_:)-(A)``: safe from any thread, and reduced in arrival order. The
    /// effect starts after the new state reached the state's observers; the actions it sends are
    /// dispatched to this store, through the middleware, in the order the effect sends them.
    ///
    /// ```swift
    /// enum Ping: EffectAction {
    ///     case ping, pong
    ///     func reduce(into log: inout [String]) -> Effect<Ping> {
    ///         switch self {
    ///         case .ping:
    ///             log.append("ping")
    ///             return .send(.pong)
    ///         case .pong:
    ///             log.append("pong")
    ///             return .none
    ///         }
    ///     }
    /// }
    /// let store = Store([String]())
    /// store.dispatch(Ping.ping)
    /// print(store.state.value)
    /// // Prints "[\"ping\", \"pong\"]"
    /// ```
    @inlinable
    public func dispatch<E: EffectAction>(_ action: E) where E.State == State {
        dispatchAny(action)
    }

    /// Dispatches `action` so that it starts its effects if it is an ``EffectAction``, whatever its
    /// static type (for `TestStore`, which is generic over any action).
    @inlinable
    package func dispatchAny<A: Action>(_ action: A) where A.State == State {
        let core = storage.core
        if core.queue.tryAcquire() {
            performAny(action)
            core.finishDelivering()
        } else if core.queue.enqueue(.perform({ [self] in performAny(action) })) {
            core.finishDelivering()
        }
    }

    /// Dispatches `action` (effects included), calling `mark(true)` right before it enters the middleware
    /// and `mark(false)` right after, both on the deliverer: so `mark` brackets this action alone, even
    /// when another thread's action is being reduced at the time of the call (then all of it is queued
    /// behind that one). For `TestStore`, which must tell the action it sent from the ones effects sent.
    package func dispatch<A: Action>(_ action: A, marking mark: @escaping (Bool) -> Void) where A.State == State {
        runAsDeliverer { [self] in
            mark(true)
            defer { mark(false) }
            performAny(action)
        }
    }

    /// Dispatches `action` as a replay: it is reduced (through the middleware) but starts no effects,
    /// because the actions its effects sent were recorded and are replayed themselves.
    package func replay<A: Action>(_ action: A) where A.State == State {
        runAsDeliverer { [self] in
            suppressesEffects = true
            defer { suppressesEffects = false }
            performAny(action)
        }
    }

    /// How many of this store's effects are running: started, not yet ended, not cancelled. An effect
    /// that ended during its own start (a synchronous stream) is never counted.
    package var runningEffectCount: Int {
        effects.runningCount
    }

    // MARK: The effect path (the thread running the state's queue only, unless said otherwise)

    /// Hands `action` to the middleware, or reduces it through its own ``Action/_reduce(in:)``, so an
    /// effect action starts its effects whichever way it came.
    @inlinable
    func performAny<A: Action>(_ action: A) where A.State == State {
        if let chain {
            chain(action)
        } else {
            action._reduce(in: self)
        }
    }

    /// Reduces `action`, delivers the new state, then starts the action's effect.
    @inlinable
    func reduceWithEffects<A: EffectAction>(_ action: A) where A.State == State {
        var effect = Effect<A.Output>.none
        storage.core.modifyAndDeliverOwned { effect = action.reduce(into: &$0) }
        guard !effect.isNone, !suppressesEffects else { return }
        start(effect, ids: [], onFinish: nil)
    }

    /// Any thread: dispatches an action an effect sent; it is reduced only if the effect is still live
    /// when its turn comes.
    @inlinable
    func dispatchEffectOutput<A: Action>(_ action: A, from record: EffectRecord) where A.State == State {
        let core = storage.core
        if core.queue.tryAcquire() {
            performEffectOutput(action, from: record)
            core.finishDelivering()
        } else if core.queue.enqueue(.perform({ [self] in performEffectOutput(action, from: record) })) {
            core.finishDelivering()
        }
    }

    @inlinable
    func performEffectOutput<A: Action>(_ action: A, from record: EffectRecord) where A.State == State {
        guard effects.isLive(record) else { return }
        performAny(action)
    }

    /// Any thread: runs `body` as the deliverer, now or queued.
    @inlinable
    func runAsDeliverer(_ body: @escaping () -> Void) {
        let core = storage.core
        if core.queue.tryAcquire() {
            body()
            core.finishDelivering()
        } else if core.queue.enqueue(.perform(body)) {
            core.finishDelivering()
        }
    }

    /// Starts `effect`, whose leaves carry `ids`; `onFinish` runs on the deliverer once all of it ended.
    @inlinable
    func start<Output: Action>(
        _ effect: Effect<Output>, ids: [(EffectID, UInt64)], onFinish: (() -> Void)?
    ) where Output.State == State {
        switch effect.kind {
        case .none:
            onFinish?()
        case .send(let action):
            dispatchEffectOutput(action, from: EffectRecord(ids: ids, onFinish: nil))
            onFinish?()
        case .source(let source):
            startStream(source, ids: ids, onFinish: onFinish)
        case .stream(let makeSource):
            startStream(makeSource(effects.dependencies), ids: ids, onFinish: onFinish)
        case .run(let launch):
            startTask(launch, ids: ids, onFinish: onFinish)
        case .merge(let children):
            let countdown = onFinish.map { MergeCountdown(children.count, onFinish: $0) }
            for child in children {
                start(child, ids: ids, onFinish: countdown.map { countdown in { countdown.childFinished() } })
            }
        case .concatenate(let children):
            startSequence(EffectSequence(children, ids: ids, onFinish: onFinish))
        case .cancellable(let id, let cancelInFlight, let inner):
            if cancelInFlight { cancelEffects(id) }
            start(inner, ids: ids + [effects.stamp(id)], onFinish: onFinish)
        case .cancel(let id):
            cancelEffects(id)
            onFinish?()
        }
    }

    /// Starts the children of a concatenation one after the other, each when the one before ended. A
    /// child that ends during its own start lets this loop go on, instead of starting the next from inside
    /// its `onFinish`, so a long list of effects that end at once costs no stack and no copying.
    @inlinable
    func startSequence<Output: Action>(_ sequence: EffectSequence<Output>) where Output.State == State {
        sequence.looping = true
        while true {
            // A cancel of the concatenation's own ids stops what has not started yet.
            guard sequence.next < sequence.children.count, sequence.next == 0 || effects.isLive(sequence.ids) else {
                sequence.looping = false
                sequence.onFinish?()
                return
            }
            let child = sequence.children[sequence.next]
            sequence.next += 1
            sequence.childEnded = false
            start(child, ids: sequence.ids, onFinish: { [weak self, sequence] in
                if sequence.looping {
                    sequence.childEnded = true
                } else {
                    self?.startSequence(sequence)
                }
            })
            guard sequence.childEnded else {
                sequence.looping = false
                return
            }
        }
    }

    @inlinable
    func cancelEffects(_ id: EffectID) {
        for record in effects.cancel(id) {
            record.onFinish?()
        }
    }

    @inlinable
    func startStream<Output: Action>(
        _ source: Observable<Output>, ids: [(EffectID, UInt64)], onFinish: (() -> Void)?
    ) where Output.State == State {
        let record = EffectRecord(ids: ids, onFinish: onFinish)
        // One object, the sink, is the observer's context: its two closures capture nothing else.
        let sink = StoreSink<State, Output>(self, record: record, onError: effects.onError)
        let subscription = source.subscribe(Observer(next: { [sink] in sink.send($0) }, end: { [sink] in sink.end($0) }))
        if !effects.settle(record, stopper: .subscription(subscription)) {
            onFinish?()
        }
    }

    @inlinable
    func startTask<Output: Action>(
        _ launch: (any EffectSink<Output>, Dependencies, @escaping @Sendable (any Error) -> Void) -> Task<Void, Never>,
        ids: [(EffectID, UInt64)], onFinish: (() -> Void)?
    ) where Output.State == State {
        let record = EffectRecord(ids: ids, onFinish: onFinish)
        let task = launch(StoreSink<State, Output>(self, record: record, onError: effects.onError), effects.dependencies, effects.onError)
        if !effects.settle(record, stopper: .task(task)) {
            onFinish?()
        }
    }

    /// Any thread: an effect ended by itself.
    @inlinable
    func effectEnded(_ record: EffectRecord) {
        guard effects.finish(record), let onFinish = record.onFinish else { return }
        let runtime = effects
        runAsDeliverer {
            onFinish()
            runtime.unregister(record)
        }
    }
}

/// The sink of one effect's task: dispatches what it sends to the store, if the store still exists.
///
/// `@unchecked Sendable`: it calls only the store's entries that are safe from any thread
/// (``Store/dispatchEffectOutput(_:from:)``, ``Store/effectEnded(_:)``), and holds the store weakly.
@usableFromInline
final class StoreSink<State, Output: Action>: EffectSink, @unchecked Sendable where Output.State == State {
    @usableFromInline weak var store: Store<State>?
    @usableFromInline let record: EffectRecord
    @usableFromInline let onError: @Sendable (any Error) -> Void

    @inlinable
    init(_ store: Store<State>, record: EffectRecord, onError: @escaping @Sendable (any Error) -> Void) {
        self.store = store
        self.record = record
        self.onError = onError
    }

    @inlinable func send(_ action: Output) { store?.dispatchEffectOutput(action, from: record) }
    @inlinable func end() { store?.effectEnded(record) }

    /// A stream effect's end: a failure goes to the store's error handler first, unless the effect was
    /// cancelled (a failure racing the cancel is moot).
    @inlinable
    func end(_ termination: Termination) {
        if case .failed(let error) = termination, !record.isCancelled.load(ordering: .acquiring) { onError(error) }
        end()
    }
}
