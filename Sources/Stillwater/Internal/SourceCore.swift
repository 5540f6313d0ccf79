import Synchronization

/// The shared engine of every hot source: subjects, relays, properties and handles.
///
/// It keeps the observers, serialises delivery through a ``DeliveryQueue``, remembers the terminal event,
/// and, for sources that replay (`replayLimit > 0`), the last values a new subscriber receives first.
///
/// Ownership: `observers`, `isStopped`, `stopEvent` and `work` belong to whichever thread is the
/// deliverer; nobody else touches them, so delivery needs no lock. The replay buffer lives under its own
/// lock because `value` is read from any thread and a write must be visible at once, even while its
/// delivery waits its turn.
@usableFromInline
final class SourceCore<Value>: @unchecked Sendable {
    @usableFromInline
    enum Work {
        case event(Event<Value>)
        /// `replay` is `nil` for a source written only by its deliverer (a store's state): the retained
        /// values are read when the attach runs, after the writes queued before it.
        case add(ObserverBox<Value>, replay: ContiguousArray<Value>?)
        case remove(ObserverBox<Value>)
        /// Work that must run as the deliverer, in queue order (a store's reduce of a queued action).
        case perform(() -> Void)
    }

    @usableFromInline
    struct Retained {
        @usableFromInline var buffer: ContiguousArray<Value>
        @usableFromInline var isStopped = false

        @inlinable init(buffer: ContiguousArray<Value>) { self.buffer = buffer }
    }

    @usableFromInline let queue = DeliveryQueue<Work>()
    @usableFromInline @exclusivity(unchecked) var observers = ObserverBag<Value>()
    @usableFromInline @exclusivity(unchecked) var isStopped = false
    @usableFromInline @exclusivity(unchecked) var stopEvent: Termination?
    @usableFromInline @exclusivity(unchecked) var work: [Work] = []
    @usableFromInline let retained: Lock<Retained>
    /// How many of the latest values a new subscriber receives first: 0, 1 (a current value) or more.
    @usableFromInline let replayLimit: Int
    /// Whether a subscriber that arrives after the terminal event still receives the retained values
    /// (a replay subject) or only the terminal event (a behaviour subject).
    @usableFromInline let replaysAfterStop: Bool
    /// Whether the retained values change only while their writer is the deliverer (a store, whose
    /// queued actions are reduced in turn). Then a subscriber queued behind such work must be handed the
    /// values as they are when it attaches, not as they were when it asked.
    @usableFromInline let writesWhileDelivering: Bool

    @inlinable
    init(
        replayLimit: Int, initial: ContiguousArray<Value> = [], replaysAfterStop: Bool = false,
        writesWhileDelivering: Bool = false
    ) {
        self.replayLimit = replayLimit
        self.replaysAfterStop = replaysAfterStop
        self.writesWhileDelivering = writesWhileDelivering
        self.retained = Lock(
            Retained(buffer: initial),
            misuse: writesWhileDelivering ? SourceCore.storeReentered : SourceCore.propertyReentered
        )
    }

    deinit {
        observers.deallocate()
    }

    /// What a store's action is told when its `reduce` touches the store's state.
    @usableFromInline
    static var storeReentered: StaticString {
        "Stillwater: an Action's reduce read its own store (state.value, a scope's or select's value, or a new scope) while the store was reducing it. reduce runs under the store's lock: read what it needs from its inout state and from the action, and dispatch follow-up actions from an observer or a DynamicAction."
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
        if replayLimit == 0 {
            if queue.tryAcquire() {
                deliverOwned(event)
                finishDelivering()
            } else if queue.enqueue(.event(event)) {
                finishDelivering()
            }
        } else {
            sendRetaining(event)
        }
    }

    /// A replaying source records the event and claims its place in the delivery order under one lock, so
    /// the order of deliveries is the order of writes.
    @inlinable
    func sendRetaining(_ event: Event<Value>) {
        let limit = replayLimit
        let mustDeliver = retained.withLock { retained -> Bool? in
            guard !retained.isStopped else { return nil }
            switch event {
            case .next(let value):
                if limit == 1, !retained.buffer.isEmpty {
                    retained.buffer[0] = value
                } else {
                    retained.buffer.append(value)
                    if retained.buffer.count > limit {
                        retained.buffer.removeFirst(retained.buffer.count - limit)
                    }
                }
            case .error, .completed:
                retained.isStopped = true
            }
            if queue.tryAcquire() { return true }
            return queue.enqueue(.event(event)) ? false : nil
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
        let (result, mustDeliver, newValue): (Result, Bool?, Value) = try retained.withLock { retained in
            let last = retained.buffer.count - 1
            let result = try body(&retained.buffer[last])
            let value = retained.buffer[last]
            if retained.isStopped { return (result, nil, value) }
            if queue.tryAcquire() { return (result, true, value) }
            return (result, queue.enqueue(.event(.next(value))) ? false : nil, value)
        }
        finishWrite(mustDeliver, newValue)
        return result
    }

    /// Lets `body` change the current value in place and say whether it changed; delivers it only then.
    /// Atomic with respect to other writes, as ``modifyCurrent(_:)``.
    @inlinable
    func updateCurrent(_ body: (inout Value) -> Bool) {
        let written: (Bool?, Value)? = retained.withLock { retained in
            let last = retained.buffer.count - 1
            guard !retained.isStopped, body(&retained.buffer[last]) else { return nil }
            let value = retained.buffer[last]
            if queue.tryAcquire() { return (true, value) }
            return (queue.enqueue(.event(.next(value))) ? false : nil, value)
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

    /// Changes the current value in place with `body` and delivers the result. Deliverer only: the caller
    /// won ``DeliveryQueue/tryAcquire()`` or runs inside a ``Work/perform(_:)`` item, so no other write
    /// and no other delivery can come between the change and its delivery.
    ///
    /// Observers with an ``InPlaceReader`` (a store's scopes) read the new value where it lies, under the
    /// lock, and deliver their slice after it; the others receive one copy, made only if there are any.
    @inlinable @inline(__always)
    func modifyAndDeliverOwned(_ body: (inout Value) -> Void) {
        let copy: Value? = retained.withLock { retained in
            withUnsafeMutablePointer(to: &retained.buffer[retained.buffer.count - 1]) { value in
                body(&value.pointee)
                guard !isStopped else { return nil }
                var needsCopy = false
                observers.forEach { box in
                    if !box.isCancelled, !box.prepare(UnsafeRawPointer(value)) { needsCopy = true }
                }
                return needsCopy ? value.pointee : nil
            }
        }
        guard !isStopped else { return }
        if let copy {
            observers.forEach { box in
                if !box.isCancelled { box.flush(orDeliver: copy) }
            }
        } else {
            observers.forEach { box in
                if !box.isCancelled { box.flush() }
            }
        }
    }

    /// The latest retained value. Only for sources created with a current value.
    @inlinable
    var currentValue: Value {
        retained.withLock { $0.buffer[$0.buffer.count - 1] }
    }

    // MARK: Subscribing

    /// Registers `handler`; a replaying source first hands it the retained values, and a stopped source
    /// hands it only the terminal event (after the replay).
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

    /// Registers `observer`, as the event-closure form above does.
    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let box = ObserverBox(observer: observer, source: self) { box in
            unsafeDowncast(box.source, to: SourceCore.self).remove(box)
        }
        if replayLimit == 0 {
            if queue.tryAcquire() {
                addOwned(box, replay: [])
                finishDelivering()
            } else if queue.enqueue(.add(box, replay: [])) {
                finishDelivering()
            }
        } else {
            let replaysAfterStop = self.replaysAfterStop
            let (replay, mustDrain) = retained.withLock { retained -> (ContiguousArray<Value>?, Bool) in
                let replay = retained.isStopped && !replaysAfterStop ? [] : retained.buffer
                if queue.tryAcquire() { return (replay, true) }
                return (nil, queue.enqueue(.add(box, replay: writesWhileDelivering ? nil : replay)))
            }
            if let replay { addOwned(box, replay: replay) }
            if mustDrain { finishDelivering() }
        }
        return Subscription(box)
    }

    /// Called by an ``ObserverBox`` when its subscription is cancelled.
    @inlinable
    func remove(_ box: ObserverBox<Value>) {
        if queue.tryAcquire() {
            observers.remove(box)
            finishDelivering()
        } else if queue.enqueue(.remove(box)) {
            finishDelivering()
        }
    }

    // MARK: Delivering (deliverer only)

    @inlinable
    func deliverOwned(_ event: Event<Value>) {
        guard !isStopped else { return }
        switch event {
        case .next(let value):
            observers.deliver(value)
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

    /// The values a subscriber attaching now receives first (deliverer only, for deferred attaches).
    @inlinable
    func currentReplay() -> ContiguousArray<Value> {
        let replaysAfterStop = self.replaysAfterStop
        return retained.withLock { $0.isStopped && !replaysAfterStop ? [] : $0.buffer }
    }

    @inlinable
    func addOwned(_ box: ObserverBox<Value>, replay: ContiguousArray<Value>) {
        observers.add(box, replay: replay, stop: stopEvent)
    }

    /// Runs the work that arrived while this thread was delivering, until none is left, then releases the
    /// queue.
    @inlinable
    func finishDelivering() {
        guard queue.releaseOrTake(into: &work) else { return }
        drainOwned()
    }

    @inlinable
    func drainOwned() {
        repeat {
            for item in work {
                switch item {
                case .event(let event): deliverOwned(event)
                case .add(let box, let replay): addOwned(box, replay: replay ?? currentReplay())
                case .remove(let box): observers.remove(box)
                case .perform(let body): body()
                }
            }
            work.removeAll(keepingCapacity: true)
        } while queue.releaseOrTake(into: &work)
    }
}

/// A source whose deliverer can run other work in its order: a scope's subscribes, cancels and
/// deliveries all run on its root's deliverer, so the scope needs no queue or lock of its own.
@usableFromInline
protocol DeliveryHost: AnyObject, Sendable {
    /// Runs `body` as this source's deliverer: at once when no delivery is in progress, otherwise after
    /// the work queued before it.
    func run(_ body: @escaping () -> Void)
}

extension SourceCore: DeliveryHost {
    @inlinable
    func run(_ body: @escaping () -> Void) {
        if queue.tryAcquire() {
            body()
            finishDelivering()
        } else if queue.enqueue(.perform(body)) {
            finishDelivering()
        }
    }
}
