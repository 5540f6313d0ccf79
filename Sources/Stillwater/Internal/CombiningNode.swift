/// What the nodes of `combineLatest` and `zip` share: their observer, the serializer of their sources
/// (reached through a ``SerializedInput`` each), a slot per source, and the counts that decide when they
/// send and when they end.
///
/// `@unchecked Sendable`: `observer`, `missing` and `active` are touched only as the serializer's work;
/// the rest is constant.
class CombiningNode<Output>: Cancellable, @unchecked Sendable {
    /// The subscriber, until the end (which releases it).
    @exclusivity(unchecked) var observer: Observer<Output>?
    let serializer = SerializedInput<Never>.makeSerializer()
    let upstream: [SubscriptionSlot]
    /// Sources without a value to use: that have not sent one yet (`combineLatest`), or whose buffer is
    /// empty (`zip`).
    @exclusivity(unchecked) var missing: Int
    /// Sources that have not completed yet.
    @exclusivity(unchecked) var active: Int

    init(_ observer: Observer<Output>, count: Int) {
        self.observer = observer
        upstream = (0..<count).map { _ in SubscriptionSlot() }
        missing = count
        active = count
    }

    /// Counts a value of a source that `hadValue` before; returns whether every source has one now.
    func countValue(hadValue: Bool) -> Bool {
        if !hadValue { missing -= 1 }
        return missing == 0
    }

    /// Counts the completion of a source; returns whether the combination ends with it (every source
    /// completed, or this one completed without a value, so no tuple can ever come).
    func countCompletion(hadValue: Bool) -> Bool {
        active -= 1
        return active == 0 || !hadValue
    }

    /// Stops listening to every source and sends `termination`; returns `false`, which closes the
    /// serializer.
    func end(_ termination: Termination) -> Bool {
        for slot in upstream { slot.cancel() }
        let observer = self.observer
        self.observer = nil
        observer?.end(termination)
        return false
    }

    /// Stops listening to every source (the subscriber cancelled).
    func cancel() {
        for slot in upstream { slot.cancel() }
        serializer.cancel()
    }
}

/// The number of `values`.
func packCount<each Element>(_ values: repeat each Element) -> Int {
    var count = 0
    for _ in repeat each values { count += 1 }
    return count
}
