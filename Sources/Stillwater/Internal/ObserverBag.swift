import Synchronization

/// One registered observer of a ``SourceCore``: its handler, its place in the bag, and whether it was
/// cancelled. It is also what the observer's ``Subscription`` cancels.
@usableFromInline
final class ObserverBox<Value>: Cancellable, @unchecked Sendable {
    /// Owned by the source's deliverer: replaced by a no-op when the observer leaves, so what the handler
    /// captured is released even while the user still holds the subscription.
    @usableFromInline @exclusivity(unchecked) var handler: (Event<Value>) -> Void
    /// Set by the deliverer when the box enters the bag.
    @usableFromInline @exclusivity(unchecked) var token: UInt64 = 0
    /// Set once, by `cancel()`, from any thread; read before every delivery.
    @usableFromInline let isDisposed = Atomic<Bool>(false)
    @usableFromInline let source: SourceCore<Value>
    /// `source.detach(box)`, made where the box is made. `cancel()` is reached through the
    /// `Cancellable` existential, where `Value` is unknown; calling the source from there would run the
    /// unspecialised detach path (a generic-metadata lookup per step). This closure captures nothing, so
    /// it costs no allocation, and it was specialised for `Value` by the code that subscribed.
    @usableFromInline let detach: (ObserverBox<Value>) -> Void

    @inlinable
    init(handler: @escaping (Event<Value>) -> Void, source: SourceCore<Value>) {
        self.handler = handler
        self.source = source
        self.detach = { box in box.source.detach(box) }
    }

    @inlinable
    func cancel() {
        guard !isDisposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        detach(self)
    }

    @inlinable
    func release() {
        handler = ObserverBox.ignore
    }

    @usableFromInline
    static var ignore: (Event<Value>) -> Void { { _ in } }
}

/// The observers of one source, in subscription order.
///
/// A value type owned by the source's deliverer. Tokens increase with each insertion, so the array stays
/// sorted by token: delivery follows subscription order, and removal finds its box by binary search.
@usableFromInline
struct ObserverBag<Value> {
    @usableFromInline var boxes: ContiguousArray<ObserverBox<Value>> = []
    @usableFromInline var nextToken: UInt64 = 0

    @inlinable init() {}

    @inlinable
    mutating func insert(_ box: ObserverBox<Value>) {
        box.token = nextToken
        nextToken &+= 1
        boxes.append(box)
        Resources.attached()
    }

    /// Removes `box` if it is in the bag. - Complexity: O(log n) to find it; O(1) when it is the newest.
    @inlinable
    mutating func remove(_ box: ObserverBox<Value>) {
        let token = box.token
        if let last = boxes.last, last === box {
            boxes.removeLast()
        } else {
            var low = 0
            var high = boxes.count
            while low < high {
                let middle = (low + high) / 2
                if boxes[middle].token < token { low = middle + 1 } else { high = middle }
            }
            guard low < boxes.count, boxes[low] === box else { return }
            boxes.remove(at: low)
        }
        box.release()
        Resources.detached()
    }

    /// Empties the bag and returns what it held (for a terminal delivery).
    @inlinable
    mutating func removeAll() -> ContiguousArray<ObserverBox<Value>> {
        let all = boxes
        boxes = []
        Resources.detached(all.count)
        return all
    }
}
