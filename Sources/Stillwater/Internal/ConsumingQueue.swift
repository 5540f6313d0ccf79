/// A first-in, first-out queue over one array, for the buffers of `values`, `observe(on:)` and `delay`.
///
/// Taking from the front only moves an index; the taken elements are dropped from storage once they are
/// half of it. So the storage holds at most about twice the elements still queued, even when the consumer
/// never catches up, and each element costs amortised O(1).
struct ConsumingQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    init() {}

    /// Whether nothing is queued.
    var isEmpty: Bool { head == storage.count }

    /// How many elements are queued.
    var count: Int { storage.count - head }

    /// The oldest queued element.
    var first: Element? { isEmpty ? nil : storage[head] }

    /// How many elements the storage holds, taken ones not yet dropped included (for tests).
    var storedCount: Int { storage.count }

    /// Queues `element` last.
    mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Takes the oldest queued element, or returns `nil` when nothing is queued.
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
