/// A first-in, first-out queue over one array, for the buffers of `values`, `observe(on:)` and `delay`.
///
/// Taking from the front only moves an index; the taken elements are dropped from storage once they are
/// half of it. So the storage holds at most about twice the elements still queued, even when the consumer
/// never catches up, and each element costs amortised O(1).
@usableFromInline
struct ConsumingQueue<Element> {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable init() {}

    /// Whether nothing is queued.
    @inlinable var isEmpty: Bool { head == storage.count }

    /// How many elements are queued.
    @inlinable var count: Int { storage.count - head }

    /// The oldest queued element.
    @inlinable var first: Element? { isEmpty ? nil : storage[head] }

    /// How many elements the storage holds, taken ones not yet dropped included (for tests).
    @inlinable var storedCount: Int { storage.count }

    /// Queues `element` last.
    @inlinable mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Takes the oldest queued element, or returns `nil` when nothing is queued.
    @inlinable mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            // Nothing left: drop the taken elements without moving anything, and keep the memory.
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Queues `element` last, first dropping the oldest element when `limit` (at least 1) are queued
    /// already, so the newest `limit` stay. A queue of one element that is full has it replaced in place.
    @inlinable mutating func append(_ element: Element, keepingNewest limit: Int) {
        if count >= limit {
            if count == 1 {
                storage[head] = element
                return
            }
            _ = popFirst()
        }
        storage.append(element)
    }
}
