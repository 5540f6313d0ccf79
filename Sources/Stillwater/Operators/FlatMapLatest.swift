import Synchronization

extension ObservableType {
    /// Maps each value to a stream and sends the values of the latest such stream only; a new value
    /// cancels the previous inner stream.
    ///
    /// Completes when this stream and the current inner stream have both completed; fails as soon as
    /// either fails. Values from a replaced inner stream are never delivered, even if that stream sends
    /// from another thread at the moment it is replaced.
    ///
    /// ```swift
    /// let query = PublishSubject<String>()
    /// let results = query.flatMapLatest { text in Observable.of(text.uppercased()) }
    /// let subscription = results.observe { print($0) }
    /// query.send("swift")
    /// // Prints "SWIFT"
    /// ```
    ///
    /// - An inner stream that sends while it is being subscribed (a cached answer, `just`, `of`) is
    ///   delivered then, by the thread delivering the outer value, before that value's delivery is over,
    ///   unless other events wait to be delivered first (then after them, in order). A value the observer
    ///   sends to this stream meanwhile is delivered after the current one, as always.
    /// - Complexity: per outer value, the inner stream's own subscription plus one small object that
    ///   routes its events; nothing per inner value. The observer is called without a lock held.
    @inlinable
    public func flatMapLatest<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        Observable.recipe({ observer in
            let node = FlatMapLatestNode<Value, Inner>(transform, observer)
            // An outer event is handled on the sending thread when no other event is being handled, else
            // queued behind.
            node.outer.replace(with: self.subscribe(Observer(
                next: { [node] in node.serializer.submit(.outer(.next($0))) },
                end: { [node] in node.serializer.submit(.outer($0.event())) }
            )))
            return Subscription(node)
        })
    }
}

/// One `flatMapLatest` subscription, as other threads see it: the serializer that every event goes
/// through, the two subscriptions (the outer stream's, the current inner stream's), and which thread is
/// subscribing an inner stream. Its state is a ``FlatMapLatestMachine`` that only the serializer's handler
/// holds, so one thread at a time runs it.
@usableFromInline
final class FlatMapLatestNode<Value, Inner: ObservableType>: Cancellable, Sendable {
    @usableFromInline typealias Work = FlatMapLatestWork<Value, Inner.Value>

    @usableFromInline let serializer: Serializer<Work>
    @usableFromInline let outer = SubscriptionSlot()
    @usableFromInline let inner = SubscriptionSlot()
    /// The thread subscribing an inner stream as the serializer's runner, or 0. An inner event on that
    /// thread arrives while the runner is inside the machine, so it is handled there and then (see
    /// ``FlatMapLatestLink``).
    @usableFromInline let subscribingThread = Atomic<UInt>(0)

    @inlinable
    init(_ transform: @escaping (Value) -> Inner, _ observer: Observer<Inner.Value>) {
        serializer = Serializer { _ in true }
        let machine = FlatMapLatestMachine(transform, observer, node: self)
        // The handler owns the machine's transform and observer (through `owner`): when the result ends
        // or is cancelled, the serializer's runner lets go of the handler, and with it of them, even while
        // a source still keeps an inner observer (and so the machine).
        let owner = FlatMapLatestOwner(machine)
        serializer.handler = SerializerHandler { [owner] work in owner.machine.receive(work) }
    }

    @usableFromInline
    func cancel() {
        outer.cancel()
        inner.cancel()
        serializer.cancel()
    }
}

/// The state of one `flatMapLatest` subscription, run by one thread at a time: the serializer's runner.
/// (So its `var`s skip the runtime's exclusivity check, which would check nothing.)
///
/// `state` says what runs: the outer stream and perhaps an inner one, until the result ends. Inner
/// streams are numbered (`generation`); an event of an older one is dropped, so a replaced stream's values
/// are never delivered, even if it sends from another thread as it is replaced.
@usableFromInline
final class FlatMapLatestMachine<Value, Inner: ObservableType> {
    @usableFromInline
    enum State {
        /// Running: whether the outer stream has completed, and whether an inner stream runs.
        case active(outerDone: Bool, innerRunning: Bool)
        /// The observer has had its end.
        case ended
    }

    @usableFromInline @exclusivity(unchecked) var state = State.active(outerDone: false, innerRunning: false)
    /// The number of the current inner stream.
    @usableFromInline @exclusivity(unchecked) var generation = 0
    /// Whether the observer is being called from an inner stream's event handled in place.
    @usableFromInline @exclusivity(unchecked) var delivering = false
    /// Let go of when the result ends.
    @usableFromInline @exclusivity(unchecked) var transform: InPlaceClosure<Value, Inner>?
    /// The observer's closures; `next` is called where it lies, not copied.
    @usableFromInline @exclusivity(unchecked) var next: InPlaceClosure<Inner.Value, Void>?
    @usableFromInline @exclusivity(unchecked) var end: ((Termination) -> Void)?
    /// A cycle (the node's serializer's handler holds this machine) broken when the handler is let go
    /// of: when the result ends or is cancelled.
    @usableFromInline let node: FlatMapLatestNode<Value, Inner>

    @inlinable
    init(
        _ transform: @escaping (Value) -> Inner, _ observer: Observer<Inner.Value>,
        node: FlatMapLatestNode<Value, Inner>
    ) {
        self.transform = InPlaceClosure(transform)
        next = InPlaceClosure(observer.next)
        end = observer.end
        self.node = node
    }

    /// Handles one event; false once the result has ended.
    @inlinable
    func receive(_ work: FlatMapLatestWork<Value, Inner.Value>) -> Bool {
        switch work {
        case .outer(.next(let value)):
            return receiveOuter(value)
        case .outer(.completed):
            guard case .active(_, let innerRunning) = state else { return false }
            if innerRunning {
                state = .active(outerDone: true, innerRunning: true)
                return true
            }
            finish(.completed)
            return false
        case .outer(.error(let error)):
            node.inner.cancel()
            finish(.failed(error))
            return false
        case .inner(let source, let event):
            guard source == generation else { return true }
            return receiveInner(event)
        }
    }

    /// Switches to the inner stream of `value`; false if the result ended while it was subscribed.
    @inlinable
    func receiveOuter(_ value: Value) -> Bool {
        guard case .active(let outerDone, let innerRunning) = state else { return false }
        generation &+= 1
        if innerRunning { node.inner.replace(with: nil) }
        state = .active(outerDone: outerDone, innerRunning: true)
        // The call is alone in its case, so the closure is borrowed where it lies.
        let stream: Inner
        switch transform {
        case .some(let transform): stream = transform.body(value)
        case .none: return false
        }
        let link = FlatMapLatestLink(machine: self, generation: generation)
        node.subscribingThread.store(currentThread(), ordering: .relaxed)
        let subscription = stream.attach(Observer(
            next: { [link] in link.send(.next($0)) }, end: { [link] in link.send($0.event()) }))
        node.subscribingThread.store(0, ordering: .relaxed)
        guard case .active(_, let stillRunning) = state, node.serializer.isOpen else {
            subscription?.cancel()
            return false
        }
        // Kept so that the next value (or a cancel) can cancel it, unless it ended during the call.
        if stillRunning { node.inner.replace(with: subscription) }
        return true
    }

    /// An event of the current inner stream; false once the result has ended.
    @inlinable
    func receiveInner(_ event: Event<Inner.Value>) -> Bool {
        guard case .active(let outerDone, _) = state else { return false }
        switch event {
        case .next(let value):
            // The call is alone in its case, so the closure is borrowed where it lies.
            switch next {
            case .some(let next): next.body(value)
            case .none: break
            }
            return true
        case .completed:
            state = .active(outerDone: outerDone, innerRunning: false)
            guard outerDone else { return true }
            finish(.completed)
            return false
        case .error(let error):
            node.outer.cancel()
            finish(.failed(error))
            return false
        }
    }

    /// An inner event sent while the inner stream is being subscribed, on the subscribing thread, which is
    /// the serializer's runner. Handled now, unless the observer is being called right then, or work waits
    /// in the queue (an event this inner stream sent from another thread meanwhile, say): then it is
    /// queued behind, so that the events of one stream keep their order.
    @inlinable
    func receiveInPlace(_ source: Int, _ event: Event<Inner.Value>) {
        guard !delivering, !node.serializer.queue.hasPending else {
            node.serializer.submit(.inner(source, event))
            return
        }
        guard source == generation, node.serializer.isOpen else { return }
        delivering = true
        defer { delivering = false }
        // An end here makes `state` `.ended`; `receiveOuter` reports it when the subscribe call returns.
        _ = receiveInner(event)
    }

    /// Sends the result's terminal event, and lets go of the transform and the observer (and what they
    /// captured): the subscription may be kept long after.
    @inlinable
    func finish(_ termination: Termination) {
        state = .ended
        transform = nil
        next = nil
        guard let end = end.take() else { return }
        end(termination)
    }
}
