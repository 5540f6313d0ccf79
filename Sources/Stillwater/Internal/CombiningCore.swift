/// What the nodes of `combineLatest` and `zip` share: their observer, the serializer of their sources
/// (reached through a ``SerializedInput`` each), a slot per source, and the counts that decide when they
/// send and when they end. A node (``ZipNode``, ``CombineLatestNode``, ``CombineLatestArrayNode``) holds
/// one, beside its own per-source state.
///
/// The observer and the counts are touched only as the serializer's work (in a ``DelivererBox``); the
/// rest is constant.
final class CombiningCore<Output> {
    struct Counts {
        /// The subscriber, until the end (which releases it).
        var observer: Observer<Output>?
        /// Sources without a value to use: that have not sent one yet (`combineLatest`), or whose buffer
        /// is empty (`zip`).
        var missing: Int
        /// Sources that have not completed yet.
        var active: Int
    }

    let serializer = SerializedInput<Never>.makeSerializer()
    let upstream: [SubscriptionSlot]
    let counts: DelivererBox<Counts>

    init(_ observer: Observer<Output>, count: Int) {
        upstream = (0..<count).map { _ in SubscriptionSlot() }
        counts = DelivererBox(Counts(observer: observer, missing: count, active: count))
    }

    /// Sources without a value to use. Serializer's work only.
    var missing: Int {
        get { counts.value.missing }
        set { counts.value.missing = newValue }
    }

    /// Sends `value` to the observer, unless the combination ended. Serializer's work only.
    func send(_ value: Output) {
        counts.value.observer?.next(value)
    }

    /// Counts a value of a source that `hadValue` before; returns whether every source has one now.
    func countValue(hadValue: Bool) -> Bool {
        if !hadValue { counts.value.missing -= 1 }
        return counts.value.missing == 0
    }

    /// Counts the completion of a source; returns whether the combination ends with it (every source
    /// completed, or this one completed without a value, so no tuple can ever come).
    func countCompletion(hadValue: Bool) -> Bool {
        counts.value.active -= 1
        return counts.value.active == 0 || !hadValue
    }

    /// Stops listening to every source and sends `termination`; returns `false`, which closes the
    /// serializer.
    func end(_ termination: Termination) -> Bool {
        for slot in upstream { slot.cancel() }
        let observer = counts.value.observer
        counts.value.observer = nil
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
