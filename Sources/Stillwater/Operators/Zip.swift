extension Observable where Value == Any {
    /// Pairs the values of all `sources` by position: sends a tuple of the first value of each, then of
    /// the second value of each, and so on.
    ///
    /// A value waits until every other source has sent its value of the same position. Completes as soon
    /// as one source has completed and its waiting values are used up, since no further tuple can be
    /// made (as Combine's `zip` does; RxSwift's waits for the other sources to complete too); fails as
    /// soon as one fails, and cancels the others. Works for any number of sources, each of its own value
    /// type. Events from sources on different threads are delivered one at a time.
    ///
    /// ```swift
    /// let letters = PublishSubject<String>()
    /// let numbers = PublishSubject<Int>()
    /// let subscription = Observable.zip(letters, numbers).observe { print("\($0)\($1)") }
    /// letters.send("a")
    /// letters.send("b")
    /// numbers.send(1)
    /// numbers.send(2)
    /// numbers.send(3)
    /// // Prints "a1", "b2"
    /// ```
    ///
    /// - Note: Values wait in memory, without bound, until every other source has sent as many: a source
    ///   that sends much faster than another makes its waiting values pile up.
    /// - Complexity: O(1) per value, with no allocation while the buffers keep their capacity.
    public static func zip<each Source: ObservableType>(
        _ sources: repeat each Source
    ) -> Observable<(repeat (each Source).Value)> {
        Observable<(repeat (each Source).Value)>.recipe { observer in
            let node = ZipNode<repeat (each Source).Value>(observer)
            guard node.core.upstream.count > 0 else {
                observer.end(.completed)
                return .empty
            }
            var index = 0
            for (source, lane) in repeat (each sources, each node.lanes) {
                node.connect(source, to: lane, through: node.core.upstream[index])
                index += 1
            }
            return Subscription(node)
        }
    }
}

/// The values of one `zip` source that wait for the other sources, and whether it has completed.
struct ZipLane<Element> {
    var waiting = ConsumingQueue<Element>()
    var isCompleted = false
}

/// A `zip` of sources of different types: the waiting values of each in a queue of its own type.
/// `missing` counts the sources with nothing waiting.
final class ZipNode<each Value>: Cancellable {
    let core: CombiningCore<(repeat each Value)>
    let lanes: (repeat DelivererBox<ZipLane<each Value>>)
    /// Set when a value taken leaves a completed source with nothing waiting: no tuple can come after.
    let isExhausted = DelivererBox(false)

    init(_ observer: Observer<(repeat each Value)>) {
        let lanes = (repeat emptyLane(of: (each Value).self))
        self.lanes = lanes
        core = CombiningCore(observer, count: packCount(repeat each lanes))
    }

    func connect<Source: ObservableType>(
        _ source: Source, to lane: DelivererBox<ZipLane<Source.Value>>, through slot: SubscriptionSlot
    ) {
        SerializedInput<Source.Value>(core.serializer) { self.receive($0, into: lane) }.connect(source, through: slot)
    }

    func cancel() {
        core.cancel()
    }

    /// One event of the source whose lane is `lane`, as the serializer's work.
    func receive<Element>(_ event: Event<Element>, into lane: DelivererBox<ZipLane<Element>>) -> Bool {
        switch event {
        case .next(let value):
            _ = core.countValue(hadValue: !lane.value.waiting.isEmpty)
            lane.value.waiting.append(value)
            guard core.missing == 0 else { return true }
            let tuple = (repeat take(from: each lanes))
            core.send(tuple)
            return isExhausted.value ? core.end(.completed) : true
        case .completed:
            lane.value.isCompleted = true
            return lane.value.waiting.isEmpty ? core.end(.completed) : true
        case .error(let error):
            return core.end(.failed(error))
        }
    }

    /// Takes the oldest waiting value of `lane`, which has one.
    func take<Element>(from lane: DelivererBox<ZipLane<Element>>) -> Element {
        let value = lane.value.waiting.popFirst()!
        if lane.value.waiting.isEmpty {
            core.missing += 1
            if lane.value.isCompleted { isExhausted.value = true }
        }
        return value
    }
}

/// An empty lane for a source of `type`.
private func emptyLane<Element>(of type: Element.Type) -> DelivererBox<ZipLane<Element>> { DelivererBox(ZipLane()) }
