/// The values a replaying source keeps for the subscribers that come later: the last ``capacity``
/// values sent, oldest first.
///
/// It is a ring. Until it is full, a value is appended; once full, a new value overwrites the oldest one
/// in place and the start moves on. So keeping the last n values costs O(1) per value whatever n is
/// (no element is shifted), and a source of one current value (capacity 1) overwrites its one slot.
///
/// Owned by its ``SourceCore``, under the core's `retained` lock.
@usableFromInline
struct ReplayBuffer<Value> {
    /// The values, in ring order: `storage[oldest...]` then `storage[..<oldest]`.
    @usableFromInline var storage: ContiguousArray<Value>
    /// Where the oldest value lies in ``storage``: 0 until the ring is full.
    @usableFromInline var oldest = 0
    /// How many values the buffer keeps at most (at least 1).
    @usableFromInline let capacity: Int

    /// An empty buffer for the last `capacity` values, or one holding `initial` as its only value.
    @inlinable
    init(capacity: Int, initial: Value? = nil) {
        precondition(capacity > 0, "ReplayBuffer(capacity:) needs a capacity of 1 or more, got \(capacity)")
        self.capacity = capacity
        storage = []
        if let initial { storage.append(initial) }
    }

    /// Whether no value was kept yet.
    @inlinable
    var isEmpty: Bool { storage.isEmpty }

    /// How many values are kept.
    @inlinable
    var count: Int { storage.count }

    /// Keeps `value` as the latest, dropping the oldest value when the buffer is full. O(1).
    @inlinable
    mutating func append(_ value: Value) {
        if storage.count < capacity {
            storage.append(value)
        } else {
            storage[oldest] = value
            oldest += 1
            if oldest == capacity { oldest = 0 }
        }
    }

    /// Where the latest value lies in ``storage``.
    @inlinable
    var latestIndex: Int {
        oldest == 0 ? storage.count - 1 : oldest - 1
    }

    /// The latest value, read or changed in place. The buffer must not be empty.
    @inlinable
    var latest: Value {
        get { storage[latestIndex] }
        _modify { yield &storage[latestIndex] }
    }

    /// The kept values, oldest first. Shares the storage (no copy of the elements) unless the ring has
    /// wrapped.
    @inlinable
    var elements: ContiguousArray<Value> {
        guard oldest != 0 else { return storage }
        var ordered = ContiguousArray<Value>()
        ordered.reserveCapacity(storage.count)
        ordered.append(contentsOf: storage[oldest...])
        ordered.append(contentsOf: storage[..<oldest])
        return ordered
    }
}
