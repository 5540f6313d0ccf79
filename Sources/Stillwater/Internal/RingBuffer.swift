/// The latest `capacity` elements appended, oldest first: appending to a full buffer drops the oldest
/// element in O(1), by writing over its slot, instead of shifting the others down as
/// `Array.removeFirst` does.
///
/// Two owners keep one: a replaying source (``SourceCore``'s replay buffer: the last n values for later
/// subscribers, or the current value, changed in place through ``newest``), and ``History`` (its bounded
/// undo states). It is also a stack: ``popLast()`` takes back the newest element. Slots grow as elements
/// arrive, up to `capacity`, so a large capacity that is never filled costs nothing; a removed element is
/// released at once.
///
/// Not thread-safe: a value type, kept under its owner's lock.
@usableFromInline
struct RingBuffer<Element> {
    /// How many elements the buffer keeps at most. 0 keeps none.
    @usableFromInline let capacity: Int
    /// The slots; `nil` where an element was taken back. Grows to `capacity`, never beyond.
    @usableFromInline var slots: ContiguousArray<Element?> = []
    /// The slot of the oldest element. Stays 0 until the slots reach `capacity`, which is the only
    /// time the oldest element is dropped.
    @usableFromInline var head = 0
    /// How many elements the buffer holds.
    @usableFromInline var count = 0

    /// An empty buffer that keeps up to `capacity` elements.
    @inlinable
    init(capacity: Int) {
        precondition(capacity >= 0, "RingBuffer(capacity:) must not be negative (got \(capacity))")
        self.capacity = capacity
    }

    /// A buffer that keeps up to `capacity` elements (at least 1), holding `initial` as its only one.
    @inlinable
    init(capacity: Int, initial: Element) {
        precondition(capacity > 0, "RingBuffer(capacity:initial:) needs a capacity of 1 or more to hold initial (got \(capacity))")
        self.init(capacity: capacity)
        append(initial)
    }

    /// The newest element, read or changed in place. The buffer must not be empty.
    ///
    /// - Complexity: O(1); changing it does not copy it.
    @inlinable
    var newest: Element {
        get {
            precondition(count > 0, "RingBuffer.newest of an empty buffer")
            return slots[slot(count - 1)].unsafelyUnwrapped
        }
        _modify {
            precondition(count > 0, "RingBuffer.newest of an empty buffer")
            yield &slots[slot(count - 1)]!
        }
    }

    /// The slot of the element at `offset` from the oldest.
    @inlinable
    func slot(_ offset: Int) -> Int {
        let slot = head + offset
        return slot < slots.count ? slot : slot - slots.count
    }

    /// Adds `element` as the newest. When the buffer is full, the oldest element is dropped to make
    /// room, and returned; with a capacity of 0, `element` itself is.
    ///
    /// - Complexity: O(1) (amortised while the slots grow).
    @inlinable
    @discardableResult
    mutating func append(_ element: Element) -> Element? {
        guard capacity > 0 else { return element }
        if count == capacity {
            let dropped = slots[head]
            slots[head] = element
            head = head + 1 == capacity ? 0 : head + 1
            return dropped
        }
        if count == slots.count {
            slots.append(element)
        } else {
            slots[slot(count)] = element
        }
        count += 1
        return nil
    }

    /// Removes and returns the newest element, or `nil` when the buffer is empty.
    ///
    /// - Complexity: O(1).
    @inlinable
    mutating func popLast() -> Element? {
        guard count > 0 else { return nil }
        count -= 1
        let last = slot(count)
        defer { slots[last] = nil }
        return slots[last]
    }

    /// Removes every element (and releases it); the capacity stays.
    @inlinable
    mutating func removeAll() {
        slots.removeAll(keepingCapacity: true)
        head = 0
        count = 0
    }
}

extension RingBuffer: RandomAccessCollection {
    /// The offset of the oldest element: always 0.
    @inlinable
    var startIndex: Int { 0 }
    /// One past the offset of the newest element: ``count``.
    @inlinable
    var endIndex: Int { count }

    /// The element at `offset` from the oldest (0 is the oldest, `count - 1` the newest).
    @inlinable
    subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "RingBuffer index \(offset) is out of 0..<\(count)")
        return slots[slot(offset)]!
    }
}
