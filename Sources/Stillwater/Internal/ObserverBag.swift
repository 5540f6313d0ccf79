import Synchronization

/// The handler of one observer, in an object of its own so the delivery loop can call it without
/// touching its reference count (see ``ObserverBox/handler``).
@usableFromInline
final class ObserverHandler<Value> {
    @usableFromInline let next: (Value) -> Void
    @usableFromInline let end: (Termination) -> Void
    /// The observer's in-place reader, unwrapped into plain stored closures: calling a closure kept in
    /// an optional copies (retains) it first. Used only when ``readsInPlace``.
    @usableFromInline let prepare: (UnsafeRawPointer) -> Void
    @usableFromInline let flush: () -> Void
    @usableFromInline let readsInPlace: Bool
    /// The event closure the observer was made from, unwrapped the same way, so that a subscriber with
    /// an event closure is called directly rather than through the observer's `next` wrapper. Used only
    /// when ``takesEvents``.
    @usableFromInline let events: (Event<Value>) -> Void
    @usableFromInline let takesEvents: Bool

    /// Hands `value` to the observer: its event closure when it was made from one, otherwise `next`.
    @inlinable @inline(__always)
    func receive(_ value: Value) {
        if takesEvents {
            sendEvent(value)
        } else {
            next(value)
        }
    }

    /// Hands `value` to the event closure. Kept out of line: the `Event` it builds needs its own copy of
    /// the value, and inlined into the delivery loop that copy (a retain and a release) was made for
    /// every observer, event closure or not.
    @inlinable @inline(never)
    func sendEvent(_ value: Value) {
        events(.next(value))
    }

    @inlinable @inline(__always)
    init(_ observer: Observer<Value>) {
        next = observer.next
        end = observer.end
        if let events = observer.events {
            self.events = events
            takesEvents = true
        } else {
            self.events = { _ in }
            takesEvents = false
        }
        // Not `??`: its generic autoclosure would wrap each closure in two reabstraction thunks.
        if let extras = observer.extras, let reader = extras.inPlace {
            prepare = reader.prepare
            flush = reader.flush
            readsInPlace = true
        } else {
            prepare = { _ in }
            flush = {}
            readsInPlace = false
        }
    }
}

/// One registered observer of a ``SourceCore``: its handler, its place in the bag, and whether it was
/// cancelled. It is also what the observer's ``Subscription`` cancels.
///
/// Not `Sendable`, and nothing needs it to be: a box is reached only through its source's ``SourceCore``
/// (its bag) and its observer's ``Subscription`` (its target), each of which says why sharing it is safe
/// (`handler` and `token` belong to the source's deliverer; `isDisposed` is atomic).
@usableFromInline final class ObserverBox<Value>: Cancellable {
    /// The handler, retained by hand. Owned by the source's deliverer: set to `nil` (and released) when
    /// the observer leaves, so what the handler captured is released even while the user still holds the
    /// subscription.
    ///
    /// It is kept unmanaged for the delivery loop's sake: a closure read from a `var` must be retained
    /// for the length of the call (the call could replace it), which costs two atomic operations per
    /// delivery. Only the deliverer replaces it, and never while calling it, so ``deliver(_:)`` borrows
    /// it instead.
    @usableFromInline @exclusivity(unchecked) var handler: Unmanaged<ObserverHandler<Value>>?
    /// Set by the deliverer when the box enters the bag.
    @usableFromInline @exclusivity(unchecked) var token: UInt64 = 0
    /// Set once, by `cancel()`, from any thread; read before every delivery.
    @usableFromInline let isDisposed = Atomic<Bool>(false)
    /// What the box is registered with: a ``SourceCore`` or a ``ScopeFollower``.
    @usableFromInline let source: AnyObject
    /// `source.remove(box)`, made where the box is made. `cancel()` is reached through the
    /// `Cancellable` existential, where `Value` is unknown; calling the source from there would run the
    /// unspecialised removal path (a generic-metadata lookup per step). This closure captures nothing, so
    /// it costs no allocation, and it was specialised for `Value` by the code that subscribed.
    @usableFromInline let remove: (ObserverBox<Value>) -> Void

    /// Whether ``Resources/liveSubscriptions`` counts this observer: every observer but a scope's link to
    /// its parent (an observer with an ``InPlaceReader``), which lives while the scope is held, observed or
    /// not.
    @usableFromInline let isCounted: Bool

    @inlinable @inline(__always)
    init(observer: Observer<Value>, source: AnyObject, remove: @escaping (ObserverBox<Value>) -> Void) {
        let handler = ObserverHandler(observer)
        self.isCounted = !handler.readsInPlace
        self.handler = Unmanaged.passRetained(handler)
        self.source = source
        self.remove = remove
    }

    deinit {
        handler?.release()
    }

    @inlinable
    func cancel() {
        guard !isDisposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        remove(self)
    }

    /// Whether the subscription was cancelled (from any thread).
    @inlinable
    var isCancelled: Bool { isDisposed.load(ordering: .relaxed) }

    /// Hands `value` to the handler, unless the observer left. Deliverer only.
    @inlinable @inline(__always)
    func deliver(_ value: Value) {
        handler?._withUnsafeGuaranteedRef { $0.receive(value) }
    }

    /// Lets an in-place reader read the value at `address`, or returns `false` when the observer has none
    /// (it needs a copy). Deliverer only.
    @inlinable @inline(__always)
    func prepare(_ address: UnsafeRawPointer) -> Bool {
        guard let handler else { return true }
        return handler._withUnsafeGuaranteedRef { handler in
            guard handler.readsInPlace else { return false }
            handler.prepare(address)
            return true
        }
    }

    /// Lets an in-place reader deliver what it prepared, or hands the observer `copy`. Deliverer only.
    @inlinable @inline(__always)
    func flush(orDeliver copy: Value) {
        handler?._withUnsafeGuaranteedRef { handler in
            if handler.readsInPlace {
                handler.flush()
            } else {
                handler.receive(copy)
            }
        }
    }

    /// Lets an in-place reader deliver what it prepared; does nothing for other observers. Deliverer
    /// only.
    @inlinable @inline(__always)
    func flush() {
        handler?._withUnsafeGuaranteedRef { handler in
            if handler.readsInPlace { handler.flush() }
        }
    }

    /// Releases the handler and returns its end closure, for a last call after the box left (a terminal
    /// event). Deliverer only.
    @inlinable
    func takeEnd() -> ((Termination) -> Void)? {
        guard let handler else { return nil }
        self.handler = nil
        return handler.takeRetainedValue().end
    }

    /// Releases the handler and what it captured. Deliverer only.
    @inlinable
    func release() {
        handler?.release()
        handler = nil
    }
}

/// The observers of one source, in subscription order.
///
/// Owned by the source's deliverer: it changes only through the deliverer, and a delivery never changes it
/// (a subscribe or cancel from inside a handler is queued behind the delivery). Tokens increase with each
/// insertion, so the boxes stay sorted by token: delivery follows subscription order, and removal finds its
/// box by binary search.
///
/// The bag owns its memory: a buffer it allocates, grows and frees itself, holding one retained reference
/// per box (as `Unmanaged`, released when the box leaves). The delivery loop reads ``members``, a copy of
/// the buffer's address and count. That copy holds no reference, so reading it costs nothing, and the loop
/// borrows each box for its call without retaining it. The address stays valid for the loop's length
/// because the buffer is reallocated or freed only by a change to the bag, and no change happens during a
/// loop (see above). The bag is noncopyable, so the buffer has exactly one owner, which frees it.
///
/// Deliver with `observers.members.deliver(value)`.
///
/// - Complexity: Delivery: O(n), no retain, release or allocation. Adding: amortised O(1). Removing:
///   O(log n) to find the box plus O(n) to close the gap (the boxes after it move one place; O(1) for the
///   newest box, the common case of a short-lived subscription). Ending: O(n).
@usableFromInline
struct ObserverBag<Value>: ~Copyable {
    /// The boxes as the delivery loop reads them: the bag's buffer and how many boxes it holds. Valid
    /// until the bag changes.
    @usableFromInline
    struct Members {
        /// The bag's buffer; `nil` until the first box.
        @usableFromInline let elements: UnsafeMutablePointer<Unmanaged<ObserverBox<Value>>>?
        @usableFromInline let count: Int

        @inlinable @inline(__always)
        init(_ elements: UnsafeMutablePointer<Unmanaged<ObserverBox<Value>>>?, count: Int) {
            self.elements = elements
            self.count = count
        }

        /// The box at `index`, unretained. `index` must be below ``count``.
        @inlinable @inline(__always)
        func box(at index: Int) -> Unmanaged<ObserverBox<Value>> {
            elements.unsafelyUnwrapped[index]
        }

        /// Calls `body` with each box in subscription order, without retaining them.
        @inlinable @inline(__always)
        func forEach(_ body: (ObserverBox<Value>) -> Void) {
            for index in 0..<count {
                box(at: index)._withUnsafeGuaranteedRef(body)
            }
        }

        /// Hands `value` to every observer whose subscription is not cancelled, in order.
        @inlinable
        func deliver(_ value: Value) {
            for index in 0..<count {
                box(at: index)._withUnsafeGuaranteedRef { box in
                    if !box.isCancelled { box.deliver(value) }
                }
            }
        }
    }

    /// The buffer: `capacity` places, the first `count` holding one retained box each, in token order.
    @usableFromInline var elements: UnsafeMutablePointer<Unmanaged<ObserverBox<Value>>>?
    @usableFromInline var count = 0
    @usableFromInline var capacity = 0
    @usableFromInline var nextToken: UInt64 = 0

    @inlinable init() {}

    @inlinable
    deinit {
        guard let elements else { return }
        for index in 0..<count { elements[index].release() }
        elements.deallocate()
    }

    /// What the delivery loop reads; see ``Members``.
    @inlinable
    var members: Members {
        @inline(__always) get { Members(elements, count: count) }
    }

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Empties the bag, handing `termination` to every observer whose subscription is not cancelled, and
    /// releasing every handler.
    @inlinable
    mutating func end(_ termination: Termination) {
        for box in removeAll() {
            let end = box.takeEnd()
            if !box.isCancelled { end?(termination) }
        }
    }

    /// Adds `box` after handing it `replay`; after the source's `stop`, hands it only the end instead.
    /// A box cancelled before or during its replay is released and not added.
    @inlinable
    mutating func add<Replay: Sequence<Value>>(_ box: ObserverBox<Value>, replay: Replay, stop: Termination?) {
        guard !box.isCancelled else {
            box.release()
            return
        }
        for value in replay {
            box.deliver(value)
            if box.isCancelled {
                box.release()
                return
            }
        }
        if let stop {
            box.takeEnd()?(stop)
        } else {
            insert(box)
        }
    }

    @inlinable
    mutating func insert(_ box: ObserverBox<Value>) {
        box.token = nextToken
        nextToken &+= 1
        if count == capacity { grow() }
        (elements.unsafelyUnwrapped + count).initialize(to: .passRetained(box))
        count += 1
        if box.isCounted { Resources.observerAdded() }
    }

    /// Doubles the buffer (four places at first), moving the boxes over.
    @usableFromInline
    mutating func grow() {
        let newCapacity = Swift.max(4, capacity * 2)
        let newElements = UnsafeMutablePointer<Unmanaged<ObserverBox<Value>>>.allocate(capacity: newCapacity)
        if let elements {
            newElements.moveInitialize(from: elements, count: count)
            elements.deallocate()
        }
        elements = newElements
        capacity = newCapacity
    }

    /// Removes `box` and releases its handler; does nothing when `box` is not in the bag.
    @inlinable
    mutating func remove(_ box: ObserverBox<Value>) {
        guard let index = index(of: box), let elements else { return }
        let removed = (elements + index).move()
        (elements + index).moveInitialize(from: elements + index + 1, count: count - index - 1)
        count -= 1
        box.release()
        if box.isCounted { Resources.observerRemoved() }
        removed.release()
    }

    /// Where `box` is: the last place when it is the newest box, otherwise found by binary search on the
    /// tokens.
    @inlinable
    func index(of target: ObserverBox<Value>) -> Int? {
        let members = members
        let wanted = Unmanaged.passUnretained(target).toOpaque()
        guard count > 0 else { return nil }
        if members.box(at: count - 1).toOpaque() == wanted { return count - 1 }
        let token = target.token
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if members.box(at: middle)._withUnsafeGuaranteedRef({ $0.token }) < token {
                low = middle + 1
            } else {
                high = middle
            }
        }
        guard low < count, members.box(at: low).toOpaque() == wanted else { return nil }
        return low
    }

    /// Empties the bag and returns its boxes, in order.
    @inlinable
    mutating func removeAll() -> ContiguousArray<ObserverBox<Value>> {
        var all = ContiguousArray<ObserverBox<Value>>()
        all.reserveCapacity(count)
        for index in 0..<count {
            all.append((elements.unsafelyUnwrapped + index).move().takeRetainedValue())
        }
        count = 0
        Resources.observerRemoved(all.count { $0.isCounted })
        return all
    }
}
