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
    /// - Complexity: per outer value, the inner stream's own subscription, plus one small object for the
    ///   inner observer unless the previous inner stream has ended and let go of its observer (then that
    ///   object is used again). When nothing else sends at the same time and the inner stream ends while
    ///   being subscribed, `flatMapLatest` itself takes no lock for the value.
    @inlinable
    public func flatMapLatest<Inner: ObservableType>(
        _ transform: @escaping (Value) -> Inner
    ) -> Observable<Inner.Value> {
        Observable.recipe({ observer in
            let node = FlatMapLatestNode<Value, Inner>(transform, observer)
            node.outer.replace(with: self.subscribe(Observer(
                next: { [node] in node.outerNext($0) },
                end: { [node] in node.outerEnd($0) }
            )))
            return Subscription(node)
        })
    }
}

/// The state of one `flatMapLatest` subscription.
///
/// Events reach it through its serializer, so one thread at a time runs ``receive(_:)``; the fields marked
/// "deliverer's" are touched only there. Two fast paths keep a value's round trip free of the serializer's
/// queue: an outer value arriving while nobody delivers is handled in place (``outerNext(_:)``), and an
/// inner stream that sends while it is being subscribed (a cached or synchronous result) is heard at once
/// on that same thread (``FlatMapLatestLink``), instead of being queued behind its own subscribe call.
@usableFromInline
final class FlatMapLatestNode<Value, Inner: ObservableType>: Cancellable, @unchecked Sendable {
    // @unchecked: the `var`s are the deliverer's (see above); the rest is immutable, locked or atomic.
    @usableFromInline typealias Work = FlatMapLatestWork<Value, Inner.Value>
    @usableFromInline typealias Link = FlatMapLatestLink<Value, Inner>

    /// The transform and the observer. The spare owns them (so they go with the serializer's handler when
    /// the node is cancelled, even if a source keeps its observer, and the node itself lives on), and
    /// ``finish(_:)`` lets go of them when the result ends; the node reads them unmanaged, as the
    /// deliverer while the handler is set, so calling them costs no reference counting. Deliverer's.
    @usableFromInline @exclusivity(unchecked) var callbacks: Unmanaged<FlatMapLatestCallbacks<Value, Inner>>?
    @usableFromInline let serializer: Serializer<Work>
    @usableFromInline let outer = SubscriptionSlot()
    @usableFromInline let inner = SubscriptionSlot()
    /// The thread that is subscribing an inner stream as the deliverer, or 0.
    @usableFromInline let subscribingThread = Atomic<UInt>(0)
    /// The current inner stream's number; events of older ones are dropped. Deliverer's.
    @usableFromInline @exclusivity(unchecked) var generation = 0
    @usableFromInline @exclusivity(unchecked) var outerDone = false
    @usableFromInline @exclusivity(unchecked) var innerDone = true
    /// Whether the result has ended (its observer has had its terminal event). Deliverer's.
    @usableFromInline @exclusivity(unchecked) var ended = false
    /// Whether `inner` holds a subscription that a new inner stream must cancel. Deliverer's.
    @usableFromInline @exclusivity(unchecked) var holdsInner = false
    /// Whether the observer is being called from an inner stream's synchronous event. Deliverer's.
    @usableFromInline @exclusivity(unchecked) var delivering = false
    /// Where the last link waits to be used again, and the owner of ``callbacks``. The serializer's
    /// handler owns it, so it goes, and the link's reference to this node with it, when the handler is
    /// let go of (the node ended or was cancelled); the node reaches it only as the deliverer, while the
    /// handler is still set.
    @usableFromInline let spare: Unmanaged<FlatMapLatestSpare<Value, Inner>>

    @inlinable
    init(_ transform: @escaping (Value) -> Inner, _ observer: Observer<Inner.Value>) {
        let spare = FlatMapLatestSpare<Value, Inner>(FlatMapLatestCallbacks(transform, observer))
        callbacks = .passUnretained(spare.callbacks.unsafelyUnwrapped)
        serializer = Serializer { _ in true }
        self.spare = .passUnretained(spare)
        // Cleared (and the cycle with it) when the node ends or is cancelled.
        serializer.handler = SerializerHandler { [self, spare] work in
            withExtendedLifetime(spare) { receive(work) }
        }
    }

    @inlinable
    func outerNext(_ value: Value) {
        if serializer.tryBeginInPlace() {
            serializer.endInPlace(keepOpen: !serializer.isOpen || receiveOuter(value))
        } else {
            serializer.submit(.outer(.next(value)))
        }
    }

    @inlinable
    func outerEnd(_ termination: Termination) {
        serializer.submit(.outer(termination.event()))
    }

    /// Handles one event as the deliverer; false once the result has ended.
    @inlinable
    func receive(_ work: Work) -> Bool {
        switch work {
        case .outer(.next(let value)):
            return receiveOuter(value)
        case .outer(.completed):
            outerDone = true
            guard innerDone else { return true }
            finish(.completed)
            return false
        case .outer(.error(let error)):
            inner.cancel()
            finish(.failed(error))
            return false
        case .inner(let source, .next(let value)):
            if source == generation { callbacks?._withUnsafeGuaranteedRef { $0.next(value) } }
            return true
        case .inner(let source, .completed):
            return source != generation || receiveInnerEnd(.completed)
        case .inner(let source, .error(let error)):
            return source != generation || receiveInnerEnd(.failed(error))
        }
    }

    /// Switches to the inner stream of `value`; false if the result ended while it was subscribed.
    @inlinable
    func receiveOuter(_ value: Value) -> Bool {
        generation &+= 1
        innerDone = false
        if holdsInner {
            holdsInner = false
            inner.replace(with: nil)
        }
        guard let callbacks else { return false }
        let stream = callbacks._withUnsafeGuaranteedRef { $0.transform(value) }
        subscribingThread.store(currentThread(), ordering: .relaxed)
        // The link is borrowed from the spare, which keeps it: only the two closures take a reference.
        let subscription = nextLink()._withUnsafeGuaranteedRef { link in
            stream.attach(Observer(
                next: { [link] in link.next($0) }, end: { [link] in link.end($0) }, perValue: true))
        }
        subscribingThread.store(0, ordering: .relaxed)
        if ended || !serializer.isOpen { return false }
        if !innerDone, let subscription {
            // Still running: kept so that the next value (or a cancel) can cancel it.
            holdsInner = true
            inner.replace(with: subscription)
        }
        return true
    }

    /// The link for the inner stream `generation`: the last one again when nothing else holds it (its
    /// stream has ended and let go of its observer), so a stream that ends at once costs no link.
    @inlinable
    func nextLink() -> Unmanaged<Link> {
        spare._withUnsafeGuaranteedRef { spare in
            if isKnownUniquelyReferenced(&spare.link) {
                let link = Unmanaged.passUnretained(spare.link.unsafelyUnwrapped)
                link._withUnsafeGuaranteedRef { $0.generation.store(generation, ordering: .relaxed) }
                return link
            }
            let link = Link(self, generation)
            spare.link = link
            return Unmanaged.passUnretained(link)
        }
    }

    /// The current inner stream ended. False once the result has ended.
    @inlinable
    func receiveInnerEnd(_ termination: Termination) -> Bool {
        switch termination {
        case .completed:
            innerDone = true
            guard outerDone else { return true }
            finish(.completed)
            return false
        case .failed:
            innerDone = true
            outer.cancel()
            finish(termination)
            return false
        }
    }

    /// Sends the result's terminal event, and lets go of the transform and the observer (and what they
    /// captured): the subscription may be kept long after.
    @inlinable
    func finish(_ termination: Termination) {
        ended = true
        guard let callbacks = callbacks.take() else { return }
        let end = callbacks.takeUnretainedValue().end
        spare._withUnsafeGuaranteedRef { $0.callbacks = nil }
        end(termination)
    }

    /// An inner event sent while the inner stream is being subscribed, on the subscribing thread, so this
    /// thread is the deliverer. Handled now, unless the observer is being called right then, or work
    /// waits in the queue (an event this inner stream sent from another thread meanwhile, say): then it
    /// is queued behind, so that the events of one stream keep their order. Inlined into the link's
    /// `next` and `end`, where the kind of event is known, so no ``Event`` is built and switched on.
    @inlinable @inline(__always)
    func receiveSynchronously(_ source: Int, _ event: Event<Inner.Value>) {
        guard !delivering, !serializer.queue.hasPending else {
            serializer.submit(.inner(source, event))
            return
        }
        // An end here makes `ended` true, and `receiveOuter` reports it when the subscribe call returns.
        guard source == generation, !ended, serializer.isOpen else { return }
        delivering = true
        defer { delivering = false }
        switch event {
        case .next(let value): callbacks?._withUnsafeGuaranteedRef { $0.next(value) }
        case .completed: _ = receiveInnerEnd(.completed)
        case .error(let error): _ = receiveInnerEnd(.failed(error))
        }
    }

    @usableFromInline
    func cancel() {
        outer.cancel()
        inner.cancel()
        serializer.cancel()
    }
}

/// What an inner stream of a `flatMapLatest` is subscribed with: its number, and the node. Its two
/// observer closures capture the link alone, which is their context, so they allocate nothing more; and
/// the link is used again for the next inner stream once nothing else holds it.
@usableFromInline
final class FlatMapLatestLink<Value, Inner: ObservableType>: Sendable {
    @usableFromInline let node: FlatMapLatestNode<Value, Inner>
    /// Changed only while nothing but the node's spare holds the link.
    @usableFromInline let generation: Atomic<Int>

    @inlinable
    init(_ node: FlatMapLatestNode<Value, Inner>, _ generation: Int) {
        self.node = node
        self.generation = Atomic(generation)
    }

    @inlinable
    func next(_ value: Inner.Value) {
        send(.next(value))
    }

    @inlinable
    func end(_ termination: Termination) {
        send(termination.event())
    }

    @inlinable @inline(__always)
    func send(_ event: Event<Inner.Value>) {
        let source = generation.load(ordering: .relaxed)
        if node.subscribingThread.load(ordering: .relaxed) == currentThread() {
            node.receiveSynchronously(source, event)
        } else {
            node.serializer.submit(.inner(source, event))
        }
    }
}

/// What a `flatMapLatest` node calls; see ``FlatMapLatestNode/callbacks``.
@usableFromInline
final class FlatMapLatestCallbacks<Value, Inner: ObservableType> {
    @usableFromInline let transform: (Value) -> Inner
    @usableFromInline let next: (Inner.Value) -> Void
    @usableFromInline let end: (Termination) -> Void

    @inlinable
    init(_ transform: @escaping (Value) -> Inner, _ observer: Observer<Inner.Value>) {
        self.transform = transform
        next = observer.next
        end = observer.end
    }
}

/// What the serializer's handler of a `flatMapLatest` node owns: the node's last link, kept to be used
/// again, and its callbacks; see ``FlatMapLatestNode/spare``.
@usableFromInline
final class FlatMapLatestSpare<Value, Inner: ObservableType> {
    /// The deliverer's.
    @usableFromInline @exclusivity(unchecked) var link: FlatMapLatestLink<Value, Inner>?
    /// Set until the result ends. The deliverer's.
    @usableFromInline @exclusivity(unchecked) var callbacks: FlatMapLatestCallbacks<Value, Inner>?

    @inlinable
    init(_ callbacks: FlatMapLatestCallbacks<Value, Inner>) {
        self.callbacks = callbacks
    }
}

/// What reaches a `flatMapLatest` node: an outer event, or an event of the inner stream of a generation.
@usableFromInline
enum FlatMapLatestWork<Outer, InnerValue> {
    case outer(Event<Outer>)
    case inner(Int, Event<InnerValue>)
}
