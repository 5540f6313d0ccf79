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
    ///
    /// - Returns: The action's effects, with the effects of the actions they send: `await` its
    ///   ``StoreTask/finish()`` to wait for them all to end, or ``StoreTask/cancel()`` them. Already
    ///   finished (and costing nothing) when every effect ended during the dispatch.
    @inlinable
    @discardableResult
    public func dispatch<E: EffectAction>(_ action: sending E) -> StoreTask where E.State == State {
        Unmanaged.passUnretained(storage.core)._withUnsafeGuaranteedRef { core in
            guard core.queue.tryAcquire() else { return dispatchQueued(action, on: core) }
            if effects.middleware == nil { deliverer.inlineBudget = Self.inlineDepthLimit }
            deliverer.effectGroupIsRoot = true
            perform(action)
            deliverer.effectGroupIsRoot = false
            deliverer.inlineBudget = 0
            // The group is taken while this thread is still the deliverer: once it let go, the next
            // dispatch's group may be there. The actions the effects sent during the dispatch, if queued,
            // are reduced first, in the group.
            let group = deliverer.rootGroup.take()
            guard core.releaseOrTake() else { return StoreTask(group?.completion) }
            return StoreTask(finishDispatch(on: core, group: group)?.completion)
        }
    }

    /// The end of ``dispatch(_:)-(E)`` when work was queued meanwhile: runs it, as the deliverer, and
    /// takes the dispatch's group (made by `group`, or later by the work) right before each try to let go
    /// of the queue, putting it back when the try finds more work. Not inlined: the common dispatch, with
    /// nothing queued, stays small.
    @inlinable @inline(never)
    func finishDispatch(on core: SourceCore<State>, group: EffectGroup?) -> EffectGroup? {
        if let group { deliverer.rootGroup = group }
        while true {
            core.runTakenWorkOwned()
            let group = deliverer.rootGroup.take()
            guard core.releaseOrTake() else { return group }
            if let group { deliverer.rootGroup = group }
        }
    }

    /// ``dispatch(_:)-(E)`` behind another thread's work: the group exists before the action is reduced.
    /// (A function of its own, so the dispatch that finds the queue idle stays small.)
    @inlinable
    func dispatchQueued<E: EffectAction>(_ action: E, on core: SourceCore<State>) -> StoreTask where E.State == State {
        let group = EffectGroup(runtime: effects)
        if core.enqueue(.perform({ [self] in
            deliverer.effectGroup = group
            perform(action)
            deliverer.effectGroup = nil
        })) {
            core.finishDelivering()
        }
        return StoreTask(group.completion)
    }

    /// Deliverer only: the group of the effects started now, made at once if they belong to the dispatch
    /// in progress (its ``rootGroup``): for a record about to outlive its start, or a concatenation whose
    /// later children start after the dispatch.
    @inlinable
    func lastingGroup() -> EffectGroup? {
        let effects = effects
        return deliverer.lastingGroup { EffectGroup(runtime: effects) }
    }

    /// Deliverer only, once the start of `record`'s effect ended: registers the record with `stopper`,
    /// moved from the dispatch in progress to that dispatch's group, unless the effect already ended;
    /// returns `false` then (the caller runs its `onFinish`). An effect that ended during its start
    /// (a synchronous stream) costs one check here.
    @inlinable
    func settle(_ record: EffectRecord, stopper: EffectRuntime.Stopper?) -> Bool {
        if record.phase.load(ordering: .acquiring) == EffectRecord.done { return false }
        if record.groupIsRoot {
            record.groupIsRoot = false
            let outer = deliverer.effectGroupIsRoot
            deliverer.effectGroupIsRoot = true
            record.group = lastingGroup()
            deliverer.effectGroupIsRoot = outer
        }
        return effects.settle(record, stopper: stopper)
    }

    /// Dispatches `action` so that it starts its effects if it is an ``EffectAction``, whatever its
    /// static type (for `TestStore`, which is generic over any action).
    @inlinable
    package func dispatchAny<A: Action>(_ action: A) where A.State == State {
        Unmanaged.passUnretained(storage.core)._withUnsafeGuaranteedRef { core in
            if core.queue.tryAcquire() {
                // Nothing was queued and no middleware waits to run after the reduce, so an action that a
                // stream effect sends during its start may be reduced right after it (see
                // `startStreamHoldingOne`).
                if effects.middleware == nil { deliverer.inlineBudget = Self.inlineDepthLimit }
                perform(action)
                deliverer.inlineBudget = 0
                core.finishDelivering()
            } else if core.enqueue(.perform({ [self] in perform(action) })) {
                core.finishDelivering()
            }
        }
    }

    /// How deep actions that effects sent during their start are reduced inside one another before the
    /// store queues them instead (a long chain of such effects runs in a loop, on a small stack).
    @inlinable
    static var inlineDepthLimit: Int { 16 }

    /// Dispatches `action` (effects included), calling `mark(true)` right before it enters the middleware
    /// and `mark(false)` right after, both on the deliverer: so `mark` brackets this action alone, even
    /// when another thread's action is being reduced at the time of the call (then all of it is queued
    /// behind that one). For `TestStore`, which must tell the action it sent from the ones effects sent.
    package func dispatch<A: Action>(_ action: A, marking mark: @escaping (Bool) -> Void) where A.State == State {
        runAsDeliverer { [self] in
            mark(true)
            defer { mark(false) }
            perform(action)
        }
    }

    /// Dispatches `action` as a replay: it is reduced (through the middleware) but starts no effects,
    /// because the actions its effects sent were recorded and are replayed themselves.
    package func replay<A: Action>(_ action: A) where A.State == State {
        runAsDeliverer { [self] in
            deliverer.suppressesEffects = true
            defer { deliverer.suppressesEffects = false }
            perform(action)
        }
    }

    /// How many of this store's effects are running: started, not yet ended, not cancelled. An effect
    /// that ended during its own start (a synchronous stream) is never counted.
    package var runningEffectCount: Int {
        effects.runningCount
    }

    // MARK: The effect path (the thread running the state's queue only, unless said otherwise)

    /// Reduces `action`, delivers the new state, then starts the action's effect.
    @inlinable
    func reduceWithEffects<A: EffectAction>(_ action: A) where A.State == State {
        var effect = Effect<A.Output>.none
        if let context = effects.context {
            // The reduce, and the child features it reduces, read the store's dependencies.
            storage.core.modifyAndDeliverOwned { state in context.enter { effect = action.reduce(into: &state) } }
        } else {
            storage.core.modifyAndDeliverOwned { effect = action.reduce(into: &$0) }
        }
        if deliverer.hasChildren { cancelDepartedChildren() }
        guard !effect.isNone, !deliverer.suppressesEffects else { return }
        if deliverer.inlineBudget > 0 {
            switch effect.kind {
            case .source(let source): return startStreamHoldingOne(source)
            case .stream(let makeSource): return startStreamHoldingOne(makeSource(effects.dependencies))
            default: break
            }
        }
        start(effect, tokens: [], onFinish: nil)
    }

    /// Starts a stream effect that is all of an action's effect, from a dispatch that allows it (see
    /// ``inlineBudget``): the first action the stream sends during its start, if the queue is still empty
    /// then and when the start ends, is reduced right after the start, without being queued. That is
    /// where the queue would have reduced it: next, before anything queued later.
    @inlinable
    func startStreamHoldingOne<Output: Action>(_ source: Observable<Output>) where Output.State == State {
        assert(deliverer.effectGroup == nil, "a stream effect holding its first action started where a group is current")
        // The sink of the last such effect, if it can serve again, saves an allocation.
        var sink: StoreSink<State, Output>
        // Taken out, not copied then cleared: one reference moves, none is counted. (A spare of another
        // output type is dropped; the next such start makes one again.)
        if let spare = deliverer.spareSink.take() as? StoreSink<State, Output> {
            sink = spare
            sink.restart(in: self)
        } else {
            sink = StoreSink<State, Output>(self, tokens: [], onFinish: nil)
        }
        defer {
            if sink.isReusable && isKnownUniquelyReferenced(&sink) { deliverer.spareSink = sink }
        }
        sink.holdsOne = true
        let subscription = source.attach(Observer(next: { [sink] in sink.send($0) }, end: { [sink] in sink.end($0) }))
        let held = sink.startEnded(in: self)
        // `nil`: the stream left nothing to cancel.
        let stopper = subscription.map(EffectRuntime.Stopper.subscription)
        _ = settle(sink, stopper: stopper)
        if let action = held {
            deliverer.inlineBudget -= 1
            performStartOutput(action, from: sink)
            deliverer.inlineBudget += 1
        }
    }

    /// Any thread: dispatches an action an effect sent; it is reduced only if the effect is still live
    /// when its turn comes.
    @inlinable
    func dispatchEffectOutput<A: Action>(_ action: A, from record: EffectRecord) where A.State == State {
        let core = storage.core
        if core.queue.tryAcquire() {
            performEffectOutput(action, from: record)
            core.finishDelivering()
        } else if queueEffectOutput(action, from: record) {
            core.finishDelivering()
        }
    }

    /// Any thread: queues an action an effect sent, to be reduced (if the effect is still live) when its
    /// turn comes. Returns `true` when the caller became the deliverer (nobody was delivering) and must
    /// call `storage.core.finishDelivering()`; runs no other code, so it may be called under a lock.
    @inlinable
    func queueEffectOutput<A: Action>(_ action: A, from record: EffectRecord) -> Bool where A.State == State {
        storage.core.enqueue(.perform({ [self] in performEffectOutput(action, from: record) }))
    }

    @inlinable
    func performEffectOutput<A: Action>(_ action: A, from record: EffectRecord) where A.State == State {
        guard effects.isLive(record) else { return }
        // The action's own effects join the group of the effect that sent it. Without groups (the
        // usual case) only a flag moves: no reference is counted.
        let outerIsRoot = deliverer.effectGroupIsRoot
        deliverer.effectGroupIsRoot = record.groupIsRoot
        if record.group == nil && deliverer.effectGroup == nil {
            perform(action)
        } else {
            let outer = deliverer.effectGroup
            deliverer.effectGroup = record.group
            perform(action)
            deliverer.effectGroup = outer
        }
        deliverer.effectGroupIsRoot = outerIsRoot
    }

    /// Deliverer only, right after the start of `record`'s effect, where no group is current (see
    /// ``inlineBudget``): reduces `action`, which the effect sent during its start, if the effect is still
    /// live. Its effects join the group of the effects started here, which is the record's (the
    /// dispatch's, made when first needed, or none), so no group moves.
    @inlinable
    func performStartOutput<A: Action>(_ action: A, from record: EffectRecord) where A.State == State {
        guard effects.isLive(record) else { return }
        perform(action)
    }

    /// Any thread: runs `body` as the deliverer, now or queued.
    @inlinable
    func runAsDeliverer(_ body: @escaping () -> Void) {
        let core = storage.core
        if core.queue.tryAcquire() {
            body()
            core.finishDelivering()
        } else if core.enqueue(.perform(body)) {
            core.finishDelivering()
        }
    }

    /// Starts `effect`, whose leaves carry `ids`; `onFinish` runs on the deliverer once all of it ended.
    @inlinable
    func start<Output: Action>(
        _ effect: Effect<Output>, tokens: [CancelToken], onFinish: (() -> Void)?
    ) where Output.State == State {
        switch effect.kind {
        case .none:
            onFinish?()
        case .send(let action):
            dispatchEffectOutput(action, from: EffectRecord(tokens: tokens, onFinish: nil, groupIsRoot: deliverer.effectGroupIsRoot, group: deliverer.effectGroup))
            onFinish?()
        case .source(let source):
            startStream(source, tokens: tokens, onFinish: onFinish)
        case .stream(let makeSource):
            startStream(makeSource(effects.dependencies), tokens: tokens, onFinish: onFinish)
        case .run(let launch):
            startTask(launch, tokens: tokens, onFinish: onFinish)
        case .merge(let children):
            let countdown = onFinish.map { MergeCountdown(children.count, onFinish: $0) }
            for child in children {
                start(child, tokens: tokens, onFinish: countdown.map { countdown in { countdown.childFinished() } })
            }
        case .concatenate(let children):
            startSequence(EffectSequence(children, tokens: tokens, onFinish: onFinish, group: lastingGroup()))
        case .cancellable(let id, let cancelInFlight, let inner):
            if cancelInFlight { cancelEffects(id) }
            start(inner, tokens: tokens + [deliverer.token(for: id)], onFinish: onFinish)
        case .cancel(let id):
            cancelEffects(id)
            onFinish?()
        case .child(let id, let presence, let inner):
            deliverer.addChild(presence, under: id)
            start(inner, tokens: tokens + [deliverer.token(for: id)], onFinish: onFinish)
        case .report(let error):
            effects.onError(error)
            onFinish?()
        }
    }

    /// Starts the children of a concatenation one after the other, each when the one before ended. A
    /// child that ends during its own start lets this loop go on, instead of starting the next from inside
    /// its `onFinish`, so a long list of effects that end at once costs no stack and no copying.
    @inlinable
    func startSequence<Output: Action>(_ sequence: EffectSequence<Output>) where Output.State == State {
        let (outer, outerIsRoot) = (deliverer.effectGroup, deliverer.effectGroupIsRoot)
        deliverer.effectGroup = sequence.group
        deliverer.effectGroupIsRoot = false
        defer {
            deliverer.effectGroup = outer
            deliverer.effectGroupIsRoot = outerIsRoot
        }
        sequence.looping = true
        while true {
            // A cancel of the concatenation's own ids stops what has not started yet.
            guard sequence.next < sequence.children.count, sequence.next == 0 || effects.isLive(sequence.tokens) else {
                sequence.looping = false
                sequence.onFinish?()
                return
            }
            let child = sequence.children[sequence.next]
            sequence.next += 1
            sequence.childEnded = false
            start(child, tokens: sequence.tokens, onFinish: { [weak self, sequence] in
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

    /// Deliverer only: cancels the effects of the child features that are no longer in the state.
    ///
    /// One pass over each collection that holds children with effects, which stops once every such
    /// child was seen: O(*n*) for a collection of *n* elements, however many of its children have
    /// effects. The state is a plain copy (no user code runs under the state's lock), read in place.
    @usableFromInline
    func cancelDepartedChildren() {
        let scopes = deliverer.childScopes
        var departed: [(collection: EffectID, elements: [AnyHashable])] = []
        withUnsafePointer(to: state.value) { root in
            for (collection, group) in scopes {
                let gone = group.departed(in: UnsafeRawPointer(root), of: State.self)
                if !gone.isEmpty { departed.append((collection, gone)) }
            }
        }
        guard !departed.isEmpty else { return }
        for id in deliverer.removeChildren(departed) { cancelEffects(id) }
    }

    /// Deliverer only: cancels the effects started under `id` (see ``EffectRuntime/cancel(_:)``).
    @inlinable
    func cancelEffects(_ id: EffectID) {
        guard let token = deliverer.tokens.removeValue(forKey: id)?.token else { return }
        for record in effects.cancel(token) {
            record.onFinish?()
        }
    }

    /// Deliverer only: makes the runtime's weak ``EffectRuntime/store`` point at this store, the first
    /// time an effect outlives its start. (A weak reference moves the store's reference counts aside, so
    /// a store that never needs one never forms one.)
    @inlinable
    func linkEffects() {
        guard !deliverer.isLinked else { return }
        deliverer.isLinked = true
        effects.store = self
    }

    @inlinable
    func startStream<Output: Action>(
        _ source: Observable<Output>, tokens: [CancelToken], onFinish: (() -> Void)?
    ) where Output.State == State {
        // The sink is the effect's record and the observer's one context (its closures capture nothing
        // else), so the effect costs one allocation besides its stream.
        let sink = StoreSink<State, Output>(self, tokens: tokens, onFinish: onFinish)
        let subscription = source.subscribe(Observer(next: { [sink] in sink.send($0) }, end: { [sink] in sink.end($0) }))
        _ = sink.startEnded(in: self)
        if !settle(sink, stopper: .subscription(subscription)) {
            onFinish?()
        }
    }

    @inlinable
    func startTask<Output: Action>(
        _ launch: (any EffectSink<Output>, Dependencies, @escaping @Sendable (any Error) -> Void) -> Task<Void, Never>,
        tokens: [CancelToken], onFinish: (() -> Void)?
    ) where Output.State == State {
        // A task sends from elsewhere, always: the weak reference it needs is formed before it starts.
        linkEffects()
        let sink = StoreSink<State, Output>(self, tokens: tokens, onFinish: onFinish)
        let task = launch(sink, effects.dependencies, effects.onError)
        _ = sink.startEnded(in: self)
        if !settle(sink, stopper: .task(task)) {
            onFinish?()
        }
    }

    /// Deliverer only: queues the reduce of `action`, which `sink` held back during its start, in the
    /// place of the queue where it was sent: last, or, when `ahead`, before the work queued since (which
    /// all came after it).
    @inlinable
    func queueHeldOutput<Output: Action>(
        _ action: Output, of sink: StoreSink<State, Output>, ahead: Bool = false
    ) where Output.State == State {
        let core = storage.core
        let work = SourceCore<State>.Work.perform({ [sink] in sink.reduceHeld(action) })
        if ahead {
            core.enqueueAhead(work)
        } else if core.enqueue(work) {
            core.finishDelivering()
        }
    }
}

/// The children of one collection that started effects (see ``ChildPresence``): each child's element id,
/// with the id its effects run under.
@usableFromInline
struct ChildGroup {
    @usableFromInline let visit: ChildVisit
    @usableFromInline var members: [AnyHashable: EffectID] = [:]

    @usableFromInline
    init(visit: @escaping ChildVisit) {
        self.visit = visit
    }

    /// The members no longer in the state at `root`, of type `type`: none when the state is not of the
    /// type the children were written for. A first pass counts the members it meets and stops once it
    /// met them all (the usual answer, with no allocation); only when some are missing does a second pass
    /// name them. (Ids are unique in an `Identifiable` collection; were one repeated, a departed member
    /// could be missed until the next test.)
    @usableFromInline
    func departed(in root: UnsafeRawPointer, of type: Any.Type) -> [AnyHashable] {
        var seen = 0
        let known = visit(root, type) { id in
            if members[id] != nil { seen += 1 }
            return seen == members.count
        }
        guard known, seen < members.count else { return [] }
        var missing = members
        _ = visit(root, type) { id in
            missing[id] = nil
            return missing.isEmpty
        }
        return Array(missing.keys)
    }
}

/// The sink of one stream or task effect, and its record: dispatches what the effect sends to the
/// store, and tells the store when it ended.
///
/// Two ways in, chosen by ``start`` (a state machine in one atomic word), never by the calling thread:
/// - **During the start** (a stream that sends as it is subscribed, or a thread the effect handed its
///   sink to before the start ended): the store is busy delivering on the starting thread, so an action
///   cannot be reduced at once; the sender, inside the machine's `sending` state, queues one piece of
///   work per action that reduces it, in the queue's order, so it is reduced exactly where a dispatch
///   would have been. The sink holds the store strongly from the start until the start ended and the
///   last action queued during it was reduced. No weak reference, no allocation per action.
/// - **After the start**: through ``EffectRuntime/store``, a weak reference the starting thread formed
///   when the start ended (only then: a weak reference moves the store's reference counts aside, which
///   makes every retain of the store slower, and a stream that ends during its start never needs it),
///   with ``Store/dispatchEffectOutput(_:from:)``. Nothing happens once the store is gone, or once the
///   effect ended (an action sent after its end is dropped).
///
/// `@unchecked Sendable`: `starter`, `holdsOne`, `held` and `heldCount` belong, while the start runs, to
/// the thread inside ``start``'s `sending` state or to the starting thread outside of any send, and after
/// the start to the deliverer (which reduces what was queued during it), and `reducedCount` to the
/// deliverer; the compiler cannot see a hand-over made by an atomic word, nor the deliverer. The rest is
/// constant or atomic.
@usableFromInline final class StoreSink<State, Output: Action>: EffectRecord, EffectSink, @unchecked Sendable where Output.State == State {
    @usableFromInline let runtime: EffectRuntime
    /// The store, held strongly from the start until the start ended and the last action queued
    /// during it was reduced; `nil` after that (the store's effects must not keep it alive).
    @usableFromInline @exclusivity(unchecked) var starter: Store<State>?
    /// Where the start is; it hands the fields below from one sender to the next, and to the starting
    /// thread at the start's end.
    @usableFromInline let start = EffectStart()
    /// How many actions were queued during the start, and how many of those were reduced so far. (The
    /// actions are in the queued work.)
    @usableFromInline @exclusivity(unchecked) var heldCount = 0
    @usableFromInline @exclusivity(unchecked) var reducedCount = 0
    /// During a start that may keep one action for after it (``Store/startStreamHoldingOne(_:)``):
    /// whether the sink may keep one, and the one it keeps. (A sink is used again for the next such
    /// start, so the type metadata lookups its deinit makes for this field are rare.)
    @usableFromInline @exclusivity(unchecked) var holdsOne = false
    @usableFromInline @exclusivity(unchecked) var held: Output?

    @inlinable
    init(_ store: Store<State>, tokens: [CancelToken], onFinish: (() -> Void)?) {
        runtime = store.effects
        starter = store
        super.init(tokens: tokens, onFinish: onFinish, groupIsRoot: store.deliverer.effectGroupIsRoot, group: store.deliverer.effectGroup)
    }

    /// Whether this sink can serve another start: its effect ended during its start, nothing of it is
    /// queued or registered, and nothing else references it (the caller holds the only reference).
    @inlinable
    var isReusable: Bool {
        phase.load(ordering: .relaxed) == EffectRecord.done && start.isOver
            && heldCount == reducedCount && starter == nil && tokens.isEmpty && onFinish == nil && !holdsGroup
    }

    /// Whether the record holds a group (which a spare sink must not keep alive).
    @inlinable
    var holdsGroup: Bool { group != nil }

    /// Starting thread, for a reusable sink: ready for a new start in `store`, as if just made.
    @inlinable @inline(__always)
    func restart(in store: Store<State>) {
        phase.store(EffectRecord.starting, ordering: .relaxed)
        isCancelled.store(false, ordering: .relaxed)
        start.restart()
        starter = store
        // The sink holds no group (see `isReusable`), and none is current where a sink is used again
        // (see `Store.inlineBudget`).
        groupIsRoot = store.deliverer.effectGroupIsRoot
        heldCount = 0
        reducedCount = 0
    }

    /// The store, if it still exists (after the start).
    @inlinable
    var store: Store<State>? {
        runtime.store.map { unsafeDowncast($0, to: Store<State>.self) }
    }

    @inlinable
    func send(_ action: Output) {
        // Sent after the effect ended (a `send` kept past the operation's return): dropped, whether or
        // not the start is over, so the outcome does not depend on which came first.
        if phase.load(ordering: .acquiring) == EffectRecord.done { return }
        switch start.enterSend() {
        case .afterStart:
            store?.dispatchEffectOutput(action, from: self)
        case .duringStart:
            defer { start.leaveSend() }
            // The start holds the store (see `starter`), and its deliverer takes no work meanwhile, so
            // what the queue holds stays put while the action is queued.
            let store = starter.unsafelyUnwrapped
            if holdsOne {
                if held == nil {
                    if !store.storage.core.queue.hasPending {
                        held = action
                        return
                    }
                } else {
                    // A second action: the first is queued ahead of what was queued after it.
                    heldCount += 1
                    store.queueHeldOutput(held.take().unsafelyUnwrapped, of: self, ahead: store.storage.core.queue.hasPending)
                }
                holdsOne = false
            }
            heldCount += 1
            store.queueHeldOutput(action, of: self)
        }
    }

    /// Starting thread, as the deliverer: the start is over (once a send inside it returned). Forms the
    /// weak reference to the store if the effect still runs, and lets the store go unless actions wait
    /// to be reduced. Returns the action the sink kept (see ``holdsOne``), for the caller to reduce right
    /// away, unless work was queued after it: then it goes ahead of that work.
    @inlinable
    func startEnded(in store: Store<State>) -> Output? {
        if phase.load(ordering: .acquiring) != EffectRecord.done {
            store.linkEffects()
        }
        start.end()
        holdsOne = false
        var kept = held.take()
        if let action = kept, store.storage.core.queue.hasPending {
            heldCount += 1
            store.queueHeldOutput(action, of: self, ahead: true)
            kept = nil
        }
        if heldCount == 0 { starter = nil }
        return kept
    }

    /// Deliverer: reduces `action`, queued during the start, if the effect is still live.
    @inlinable
    func reduceHeld(_ action: Output) {
        let store = starter.unsafelyUnwrapped
        reducedCount += 1
        if reducedCount == heldCount { starter = nil }
        store.performEffectOutput(action, from: self)
    }

    @inlinable
    func end() {
        guard runtime.finish(self), let onFinish else { return }
        // Ended after its start (so the weak reference exists): the rest runs on the deliverer, if the
        // store still exists.
        let runtime = self.runtime
        guard let store else { return }
        store.runAsDeliverer { [self] in
            onFinish()
            runtime.unregister(self)
        }
    }

    /// A stream effect's end: a failure goes to the store's error handler first, unless the effect was
    /// cancelled (a failure racing the cancel is moot).
    @inlinable
    func end(_ termination: Termination) {
        if case .failed(let error) = termination, !isCancelled.load(ordering: .acquiring) { runtime.onError(error) }
        end()
    }
}
