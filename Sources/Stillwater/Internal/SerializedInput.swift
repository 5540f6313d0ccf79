/// Work a ``Serializer`` takes from an input that keeps its own waiting events (``SerializedInput``).
protocol WaitingWork: AnyObject {
    /// Handles the oldest waiting event; returns `false` to close the serializer.
    func runWaiting() -> Bool
}

/// One upstream of an operator whose upstreams have different value types (`combineLatest`, `zip`): its
/// events reach the operator's one serializer as themselves, never boxed in `Any`, with no allocation.
///
/// A serializer queues one type of work. So each input keeps the events that must wait in a queue of its
/// own type, and queues only itself on the serializer, which takes the input's oldest waiting event when
/// that item's turn comes. An event that finds the serializer free is handled at once, on the sending
/// thread, and never queued. The events of one upstream arrive one at a time, and each waiting event is
/// queued before its item is, so an item always finds its event, in the order the upstream sent them.
///
/// Both queues keep their capacity, so steady traffic allocates nothing.
///
/// Not `Sendable`, and nothing needs it to be: an input is reached only through its operator's upstream
/// subscription and its ``Serializer``'s queue (`waiting` is locked; `receive` runs only as the
/// serializer's work).
final class SerializedInput<Value>: WaitingWork {
    let serializer: Serializer<any WaitingWork>
    /// The operator's step for one event of this input; returns `false` to close the serializer.
    let receive: (Event<Value>) -> Bool
    let waiting = LockedBox(ConsumingQueue<Event<Value>>())

    init(_ serializer: Serializer<any WaitingWork>, receive: @escaping (Event<Value>) -> Bool) {
        self.serializer = serializer
        self.receive = receive
    }

    /// A serializer for inputs of this kind.
    static func makeSerializer() -> Serializer<any WaitingWork> {
        Serializer { $0.runWaiting() }
    }

    /// Handles `event` now if the serializer is free, or makes it wait its turn.
    func send(_ event: Event<Value>) {
        if serializer.tryBeginInPlace() {
            serializer.endInPlace(keepOpen: !serializer.isOpen || receive(event))
            return
        }
        waiting.withLock { $0.append(event) }
        serializer.submit(self)
    }

    func runWaiting() -> Bool {
        guard let event = waiting.withLock({ $0.popFirst() }) else { return true }
        return receive(event)
    }

    /// Subscribes this input to `source`, through `slot`.
    func connect(_ source: some ObservableType<Value>, through slot: SubscriptionSlot) {
        // An input connected after the node already ended (an earlier input completed or failed while
        // being subscribed) is not subscribed at all: an endless synchronous source would never return.
        guard !slot.isCancelled else { return }
        slot.replace(with: source.subscribe(Observer(next: { self.send(.next($0)) }, end: { self.send($0.event()) })))
    }
}
