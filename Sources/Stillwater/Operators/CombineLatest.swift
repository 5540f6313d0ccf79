extension Observable where Value == Any {
    /// Sends a tuple of the latest values of all `sources` whenever one of them sends, once each has sent
    /// at least one value.
    ///
    /// Completes when all sources have completed (or at once when one completes before sending anything);
    /// fails as soon as one fails, and cancels the others. Works for any number of sources, each of its
    /// own value type. Events from sources on different threads are delivered one at a time.
    ///
    /// When a source completes before its first value, RxSwift does not complete at once: it keeps the
    /// other sources subscribed, sends nothing more, and completes when all have completed or when
    /// another source sends a value after all the others have ended.
    ///
    /// ```swift
    /// let name = BehaviorSubject("Ada")
    /// let age = BehaviorSubject(36)
    /// let subscription = Observable.combineLatest(name, age).observe { print("\($0) \($1)") }
    /// age.send(37)
    /// // Prints "Ada 36", "Ada 37"
    /// ```
    ///
    /// - Complexity: Each source's latest value is kept as itself, in storage of its own type; a value
    ///   allocates nothing (the tuple is built on the stack).
    public static func combineLatest<each Source: ObservableType>(
        _ sources: repeat each Source
    ) -> Observable<(repeat (each Source).Value)> {
        Observable<(repeat (each Source).Value)>.recipe { observer in
            let node = CombineLatestNode<repeat (each Source).Value>(observer)
            guard node.sourceCount > 0 else {
                observer.end(.completed)
                return .empty
            }
            var index = 0
            for (source, latest) in repeat (each sources, each node.latest) {
                node.connect(source, to: latest, through: node.core.upstream[index])
                index += 1
            }
            return Subscription(node)
        }
    }

    /// Sends an array of the latest values of all `sources`, in their order, whenever one of them sends,
    /// once each has sent at least one value.
    ///
    /// The collection form of `combineLatest`, for a number of sources of one
    /// type known only at run time. Completes when all sources have completed (or at once when one
    /// completes before sending anything); fails as soon as one fails, and cancels the others. An empty
    /// collection completes at once, without a value (as RxSwift's does).
    ///
    /// ```swift
    /// let prices = [BehaviorSubject(3), BehaviorSubject(4)]
    /// let subscription = Observable.combineLatest(prices).observe { print($0.reduce(0, +)) }
    /// prices[0].send(10)
    /// // Prints "7", "14"
    /// ```
    ///
    /// - Complexity: The array sent is updated in place, so a value allocates nothing unless an observer
    ///   keeps the previous array (then the next value copies it once).
    public static func combineLatest<Element>(
        _ sources: some Collection<some ObservableType<Element>>
    ) -> Observable<[Element]> {
        let sources = Array(sources)
        return Observable<[Element]>.recipe { observer in
            guard !sources.isEmpty else {
                observer.end(.completed)
                return .empty
            }
            let node = CombineLatestArrayNode(observer, count: sources.count)
            for (index, source) in sources.enumerated() {
                let input = SerializedInput<Element>(node.core.serializer) { node.receive($0, at: index) }
                input.connect(source, through: node.core.upstream[index])
            }
            return Subscription(node)
        }
    }
}

/// A `combineLatest` of sources of different types: the latest value of each in a box of its own type.
final class CombineLatestNode<each Value>: Cancellable {
    let core: CombiningCore<(repeat each Value)>
    let latest: (repeat DelivererBox<(each Value)?>)

    init(_ observer: Observer<(repeat each Value)>) {
        let boxes = (repeat emptyBox(of: (each Value).self))
        latest = boxes
        core = CombiningCore(observer, count: packCount(repeat each boxes))
    }

    var sourceCount: Int { core.upstream.count }

    func connect<Source: ObservableType>(
        _ source: Source, to latest: DelivererBox<Source.Value?>, through slot: SubscriptionSlot
    ) {
        SerializedInput<Source.Value>(core.serializer) { self.receive($0, into: latest) }.connect(source, through: slot)
    }

    func cancel() {
        core.cancel()
    }

    /// The latest value of every source; each has one.
    func current() -> (repeat each Value) {
        (repeat unwrap(each latest))
    }

    /// One event of the source whose latest value `box` holds, as the serializer's work.
    func receive<Element>(_ event: Event<Element>, into box: DelivererBox<Element?>) -> Bool {
        switch event {
        case .next(let value):
            let complete = core.countValue(hadValue: box.value != nil)
            box.value = value
            if complete { core.send(current()) }
            return true
        case .completed:
            guard core.countCompletion(hadValue: box.value != nil) else { return true }
            return core.end(.completed)
        case .error(let error):
            return core.end(.failed(error))
        }
    }
}

/// A `combineLatest` of a collection of sources of one type: the latest values in one array.
final class CombineLatestArrayNode<Element>: Cancellable {
    struct Latest {
        /// The latest value of each source, until every source has one.
        var partial: [Element?]
        /// The latest values, once every source has one; updated in place.
        var values: [Element] = []
    }

    let core: CombiningCore<[Element]>
    /// Touched only as the serializer's work.
    let latest: DelivererBox<Latest>

    init(_ observer: Observer<[Element]>, count: Int) {
        latest = DelivererBox(Latest(partial: Array(repeating: nil, count: count)))
        core = CombiningCore(observer, count: count)
    }

    func cancel() {
        core.cancel()
    }

    /// One event of the source at `index`, as the serializer's work.
    func receive(_ event: Event<Element>, at index: Int) -> Bool {
        let hadValue = core.missing == 0 || latest.value.partial[index] != nil
        switch event {
        case .next(let value):
            if core.missing == 0 {
                latest.value.values[index] = value
            } else {
                latest.value.partial[index] = value
                guard core.countValue(hadValue: hadValue) else { return true }
                latest.value.values = latest.value.partial.map { $0! }
                latest.value.partial = []
            }
            core.send(latest.value.values)
            return true
        case .completed:
            guard core.countCompletion(hadValue: hadValue) else { return true }
            return core.end(.completed)
        case .error(let error):
            return core.end(.failed(error))
        }
    }
}

/// An empty box for the latest value of a source of `type`.
private func emptyBox<Element>(of type: Element.Type) -> DelivererBox<Element?> { DelivererBox(nil) }

/// The value in `box`, which has one.
private func unwrap<Element>(_ box: DelivererBox<Element?>) -> Element { box.value! }
