import Synchronization

/// What a ``SourceCore`` keeps of what it sent, for the subscribers that come later.
@usableFromInline
enum ReplayPolicy: Equatable {
    /// Nothing: a subscriber receives what is sent after it joins, and after the end only the end
    /// (publish subjects and relays, action handles).
    case none
    /// The current value: a subscriber receives it first, then every change; after the end, only the end
    /// (behaviour subjects and relays, properties).
    case latestValue
    /// The last `n` values (n ≥ 1): a subscriber receives them first, even after the end, which follows
    /// them (replay subjects, `share(replay:)`).
    case lastValues(Int)
    /// A store's state: a current value that is changed in place, and only by the source's deliverer
    /// (the store's reduce runs as queued work). So a subscriber that waited behind queued work receives
    /// the state as it is when it joins, not as it was when it asked; see
    /// `SourceCore+StoreState.swift`.
    case storeState

    /// Whether the policy keeps nothing (``none``). A pattern match, inlined into the send path, rather
    /// than the synthesised `==`, which is a call.
    @inlinable
    var keepsNothing: Bool {
        if case .none = self { true } else { false }
    }

    /// Whether this is ``storeState``.
    @inlinable
    var isStoreState: Bool {
        if case .storeState = self { true } else { false }
    }

    /// How many values the policy keeps: 0, 1 or n.
    @inlinable
    var limit: Int {
        switch self {
        case .none: 0
        case .latestValue, .storeState: 1
        case .lastValues(let count): count
        }
    }
}

/// The shared engine of every hot source: subjects, relays, properties, handles and a store's state.
///
/// It keeps the observers (an ``ObserverBag``), serialises everything that touches them through a
/// ``DeliveryQueue``, remembers the terminal event, and keeps what its ``ReplayPolicy`` says for later
/// subscribers. The life of a send, a subscribe and a cancel through it is told in
/// `Sources/Stillwater/Internal/README.md`.
///
/// Ownership: the members marked *Owned* (`observers`, `isStopped`, `stopEvent`, `work`, and the
/// methods whose names end in `Owned`) belong to whichever thread is the deliverer; nobody else touches
/// them, so delivery takes no lock. Debug builds check this (``checkOwned()``). The replay buffer lives
/// under its own lock, `retained`, because `value` is read from any thread and a write must be visible
/// at once, even while its delivery waits its turn.
///
/// `@unchecked Sendable`: its mutable fields belong to the deliverer of its ``DeliveryQueue``, which the
/// compiler cannot see (debug builds check it), but for `pending`, touched only under the queue's lock,
/// and `kept`, only under `retained`.
@usableFromInline final class SourceCore<Value>: @unchecked Sendable {
    /// What a thread that is not the deliverer leaves in the queue for the deliverer to do.
    @usableFromInline
    enum Work {
        case event(Event<Value>)
        /// A new observer, with the values it receives first (a copy of the replay buffer, which shares
        /// its storage until the buffer's next write, which then copies the buffer once). `replay` is `nil` for a store's state: the value is read when the observer is
        /// added, after the writes queued before it.
        case add(ObserverBox<Value>, replay: RingBuffer<Value>?)
        /// A cancelled observer.
        case remove(ObserverBox<Value>)
        /// Work that must run as the deliverer, in queue order: a store's reduce of a queued action, and
        /// what runs on a host through ``DeliveryHost/run(_:)`` (a scope's or derived property's subscribe
        /// or cancel, a combination's commit).
        case perform(() -> Void)
    }

    /// The kept values and whether the source has ended, under `retained`.
    @usableFromInline
    struct Retained {
        /// The replay buffer: the values kept for later subscribers, oldest first; the newest is the
        /// current value.
        @usableFromInline var replay: RingBuffer<Value>
        @usableFromInline var isStopped = false

        @inlinable init(replay: RingBuffer<Value>) { self.replay = replay }
    }

    @usableFromInline let queue = DeliveryQueue()
    /// The work other threads left for the deliverer, under `queue`'s lock.
    @usableFromInline @exclusivity(unchecked) var pending: [Work] = []
    /// Owned.
    @usableFromInline @exclusivity(unchecked) var observers = ObserverBag<Value>()
    /// Owned: whether the terminal event was delivered.
    @usableFromInline @exclusivity(unchecked) var isStopped = false
    /// Owned: the terminal event, once delivered; a late subscriber receives it.
    @usableFromInline @exclusivity(unchecked) var stopEvent: Termination?
    /// Owned: the work taken from the queue, run in order.
    @usableFromInline @exclusivity(unchecked) var work: [Work] = []
    /// Held while `kept` is read or written.
    @usableFromInline let retained: Lock<Void>
    /// The kept values, under `retained` (read from any thread, so not the deliverer's).
    @usableFromInline @exclusivity(unchecked) var kept: Retained

    /// How many observers the source has. Owned state read without the deliverer's rights: exact only
    /// when nothing is being delivered, subscribed or cancelled meanwhile (for tests).
    var observerCount: Int { observers.count }
    @usableFromInline let policy: ReplayPolicy

    /// A source that keeps what `policy` says. `current` is the first current value, which
    /// ``ReplayPolicy/latestValue`` and ``ReplayPolicy/storeState`` need and the others must not have.
    /// ``ReplayPolicy/lastValues(_:)`` of 0 is ``ReplayPolicy/none``.
    @inlinable
    init(_ policy: ReplayPolicy, current: Value? = nil) {
        let policy = policy == .lastValues(0) ? .none : policy
        precondition(policy.limit >= 0, "SourceCore: a replay of \(policy.limit) values; pass 0 or more")
        precondition(
            (current != nil) == (policy == .latestValue || policy == .storeState),
            "SourceCore: a current value is given exactly to the sources that keep one")
        var replay = RingBuffer<Value>(capacity: current == nil ? policy.limit : 1)
        if let current { replay.append(current) }
        self.policy = policy
        self.kept = Retained(replay: replay)
        self.retained = Lock(
            (),
            misuse: policy == .storeState ? SourceCore.storeReentered : SourceCore.propertyReentered
        )
    }

    /// Runs `body` with the kept values, under `retained`.
    @inlinable @inline(__always)
    func withRetained<Result, Failure: Error>(
        _ body: (inout Retained) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try retained.withLock { (_: inout Void) throws(Failure) -> Result in try body(&kept) }
    }

    /// What a property's `modify` body is told when it touches its own property.
    @usableFromInline
    static var propertyReentered: StaticString {
        "Stillwater: a MutableProperty's modify body read or wrote the same property (or a scope, binding or derived property of it) while modify held it. modify runs its body under the property's lock: change the value only through the body's inout argument, and read other things before calling modify."
    }

    // MARK: Sending

    /// Delivers `event` to every observer, or queues it when a delivery is in progress.
    @inlinable
    func send(_ event: Event<Value>) {
        if policy.keepsNothing {
            if queue.tryAcquire() {
                deliverOwned(event)
                finishDelivering()
            } else if enqueue(.event(event)) {
                finishDelivering()
            }
        } else {
            sendRetaining(event)
        }
    }

    /// A source that keeps values records the event and claims its place in the delivery order under one
    /// lock, so the order of deliveries is the order of writes. Kept out of line, so that the path of a
    /// source that keeps nothing stays short where `send` is inlined.
    @inlinable @inline(never)
    func sendRetaining(_ event: Event<Value>) {
        let mustDeliver = withRetained { retained -> Bool? in
            guard !retained.isStopped else { return nil }
            switch event {
            case .next(let value):
                retained.replay.append(value)
            case .error, .completed:
                retained.isStopped = true
            }
            if queue.tryAcquire() { return true }
            return enqueue(.event(event)) ? false : nil
        }
        switch mustDeliver {
        case true?:
            deliverOwned(event)
            finishDelivering()
        case false?:
            finishDelivering()
        case nil:
            break
        }
    }

    /// Writes the current value through `body` and delivers the result, atomically with respect to
    /// other writes (the read-modify-write of `MutableProperty.modify`). The value is changed in place,
    /// so a large value (an array in a struct) is not copied.
    @inlinable
    func modifyCurrent<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let (result, mustDeliver, newValue): (Result, Bool?, Value) = try withRetained { retained in
            let result = try body(&retained.replay.newest)
            let value = retained.replay.newest
            if retained.isStopped { return (result, nil, value) }
            if queue.tryAcquire() { return (result, true, value) }
            return (result, enqueue(.event(.next(value))) ? false : nil, value)
        }
        finishWrite(mustDeliver, newValue)
        return result
    }

    /// Lets `body` change the current value in place and say whether it changed; delivers it only then.
    /// Atomic with respect to other writes, as ``modifyCurrent(_:)``.
    @inlinable
    func updateCurrent(_ body: (inout Value) -> Bool) {
        let written: (Bool?, Value)? = withRetained { retained in
            guard !retained.isStopped, body(&retained.replay.newest) else { return nil }
            let value = retained.replay.newest
            if queue.tryAcquire() { return (true, value) }
            return (enqueue(.event(.next(value))) ? false : nil, value)
        }
        if let (mustDeliver, value) = written { finishWrite(mustDeliver, value) }
    }

    /// The end of a write that claimed its place under the lock: deliver `value` now (`true`), let the
    /// deliverer run it (`false`), or nothing (`nil`: the source has ended).
    @inlinable @inline(__always)
    func finishWrite(_ mustDeliver: Bool?, _ value: Value) {
        switch mustDeliver {
        case true?:
            deliverOwned(.next(value))
            finishDelivering()
        case false?:
            finishDelivering()
        case nil:
            break
        }
    }

    /// The current value. Only for sources that keep one (``ReplayPolicy/latestValue``,
    /// ``ReplayPolicy/storeState``).
    @inlinable
    var currentValue: Value {
        withRetained { $0.replay.newest }
    }

    // MARK: Subscribing

    /// Registers `handler`, as ``subscribe(_:)-(Observer<Value>)`` does.
    @inlinable
    func subscribe(_ handler: @escaping (Event<Value>) -> Void) -> Subscription {
        subscribe(Observer(handler))
    }

    /// This source as an ``Observable`` that subscribes straight to it (what its owner's
    /// `asObservable()` returns).
    @inlinable
    var observable: Observable<Value> {
        Observable.recipe({ [self] observer in subscribe(observer) })
    }

    /// Registers `observer`: it first receives what the policy kept (after the end, only what
    /// ``ReplayPolicy/lastValues(_:)`` replays), then every event, or only the end when the source has
    /// ended. The observer is added now when nobody is delivering, otherwise by the deliverer in turn.
    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let box = ObserverBox(observer: observer, source: self) { box in
            unsafeDowncast(box.source, to: SourceCore.self).remove(box)
        }
        if policy.keepsNothing {
            if queue.tryAcquire() {
                addOwned(box, replay: EmptyCollection())
                finishDelivering()
            } else if enqueue(.add(box, replay: RingBuffer(capacity: 0))) {
                finishDelivering()
            }
        } else {
            let (replay, mustDrain) = withRetained { retained -> (RingBuffer<Value>?, Bool) in
                let replay = replayed(from: retained)
                if queue.tryAcquire() { return (replay, true) }
                return (nil, enqueue(.add(box, replay: policy.isStoreState ? nil : replay)))
            }
            if let replay { addOwned(box, replay: replay) }
            if mustDrain { finishDelivering() }
        }
        return Subscription(box)
    }

    /// What a subscriber joining now receives first. Under `retained`.
    @inlinable
    func replayed(from retained: borrowing Retained) -> RingBuffer<Value> {
        if retained.isStopped, case .lastValues = policy { return retained.replay }
        return retained.isStopped ? RingBuffer(capacity: 0) : retained.replay
    }

    /// Called by an ``ObserverBox`` when its subscription is cancelled: the observer leaves now when
    /// nobody is delivering, otherwise by the deliverer in turn (so it may still receive the event being
    /// delivered to the others, never a later one).
    @inlinable
    func remove(_ box: ObserverBox<Value>) {
        if queue.tryAcquire() {
            removeOwned(box)
            finishDelivering()
        } else if enqueue(.remove(box)) {
            finishDelivering()
        }
    }

    // MARK: Delivering (the deliverer only)

    /// Stops the program when the calling thread is not this source's deliverer. Debug builds only; see
    /// ``DeliveryQueue/checkOwned(_:)``.
    @inlinable @inline(__always)
    func checkOwned() {
        #if DEBUG
        queue.checkOwned(SourceCore.ownershipRule)
        #endif
    }

    /// What a thread that breaks the ownership rule is told before it stops.
    @usableFromInline
    static var ownershipRule: StaticString {
        "Stillwater engine rule broken: a source's observers, end state and queued work (its ...Owned members) are touched only by the thread delivering for it, which won its DeliveryQueue; this thread did not. Reach them through send, subscribe, cancel or run, which queue the work for the deliverer."
    }

    @inlinable
    func deliverOwned(_ event: Event<Value>) {
        checkOwned()
        guard !isStopped else { return }
        switch event {
        case .next(let value):
            observers.members.deliver(value)
        case .error(let error):
            stopOwned(.failed(error))
        case .completed:
            stopOwned(.completed)
        }
    }

    @inlinable
    func stopOwned(_ termination: Termination) {
        isStopped = true
        stopEvent = termination
        observers.end(termination)
    }

    @inlinable
    func addOwned<Replay: Sequence<Value>>(_ box: ObserverBox<Value>, replay: Replay) {
        checkOwned()
        observers.add(box, replay: replay, stop: stopEvent)
    }

    @inlinable
    func removeOwned(_ box: ObserverBox<Value>) {
        checkOwned()
        observers.remove(box)
    }

    /// Runs the work that arrived while this thread was delivering, until none is left, then releases the
    /// queue.
    @inlinable
    func finishDelivering() {
        guard releaseOrTake() else { return }
        drainOwned()
    }

    /// Queues `work` for the deliverer, as ``DeliveryQueue/enqueue(_:)`` says.
    @inlinable
    func enqueue(_ work: Work) -> Bool {
        queue.enqueue { pending.append(work) }
    }

    /// Deliverer only: queues `work` before the pending work, as ``DeliveryQueue/enqueueAhead(_:)`` says.
    @inlinable
    func enqueueAhead(_ work: Work) {
        queue.enqueueAhead { pending.insert(work, at: 0) }
    }

    /// Releases the queue, or moves the pending work into `work` (``DeliveryQueue/releaseOrTake(_:)``).
    @inlinable @inline(__always)
    func releaseOrTake() -> Bool {
        queue.releaseOrTake { swap(&pending, &work) }
    }

    @inlinable
    func drainOwned() {
        repeat {
            runTakenWorkOwned()
        } while releaseOrTake()
    }

    /// Runs the work ``releaseOrTake()`` moved into `work`, then empties it (keeping its capacity).
    @inlinable
    func runTakenWorkOwned() {
        for item in work {
            switch item {
            case .event(let event): deliverOwned(event)
            case .add(let box, let replay): addOwned(box, replay: replay ?? withRetained { replayed(from: $0) })
            case .remove(let box): removeOwned(box)
            case .perform(let body): body()
            }
        }
        work.removeAll(keepingCapacity: true)
    }
}

/// What a thread that touches a scope's or a derived property's state off its root's deliverer is told
/// before it stops (debug builds).
@usableFromInline
var hostOnlyRule: StaticString {
    "Stillwater engine rule broken: a scope's or derived property's observers and last value (its 'Host only' members) are touched only on its root's deliverer, reached through DeliveryHost.run or the root's own delivery; this thread is not delivering for the root."
}

/// Stops the program with ``hostOnlyRule`` when the calling thread is not `host`'s deliverer. Debug
/// builds only: in release builds it is empty, and no call through `host` remains.
@inlinable @inline(__always)
func checkHostOwned(_ host: any DeliveryHost) {
    #if DEBUG
    host.checkOwned(hostOnlyRule)
    #endif
}

/// A source whose deliverer can run other work in its order: a scope's subscribes, cancels and
/// deliveries, and a derived property's, all run on their root's deliverer, so they need no queue or
/// lock of their own.
@usableFromInline
protocol DeliveryHost: AnyObject, Sendable {
    /// Runs `body` as this source's deliverer: at once when no delivery is in progress, otherwise after
    /// the work queued before it.
    func run(_ body: @escaping () -> Void)

    /// Stops the program with `rule` when the calling thread is not this source's deliverer. Debug builds
    /// only: what runs on a host (a scope's follower, a derived cell) checks with it that it was reached
    /// through ``run(_:)`` or the source's own delivery.
    func checkOwned(_ rule: StaticString)
}

extension SourceCore: DeliveryHost {
    @inlinable
    func run(_ body: @escaping () -> Void) {
        if queue.tryAcquire() {
            body()
            finishDelivering()
        } else if enqueue(.perform(body)) {
            finishDelivering()
        }
    }

    @inlinable
    func checkOwned(_ rule: StaticString) {
        queue.checkOwned(rule)
    }
}
