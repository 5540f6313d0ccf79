import Synchronization

// The small types a `flatMapLatest` subscription is made of besides its node and machine
// (FlatMapLatest.swift): what its serializer's handler holds, what each inner stream is subscribed with,
// and what its serializer queues.

/// What the serializer's handler of a `flatMapLatest` holds: the machine, whose transform and observer
/// it lets go of when the handler is let go of. That happens on the serializer's runner (the one thread
/// that touches the machine), when the result ends or is cancelled.
@usableFromInline
final class FlatMapLatestOwner<Value, Inner: ObservableType> {
    @usableFromInline let machine: FlatMapLatestMachine<Value, Inner>

    @inlinable
    init(_ machine: FlatMapLatestMachine<Value, Inner>) {
        self.machine = machine
    }

    deinit {
        machine.transform = nil
        machine.next = nil
        machine.end = nil
    }
}

/// What an inner stream of a `flatMapLatest` is subscribed with: its number and the machine. On the
/// thread subscribing it (the serializer's runner, inside the machine) an event is handled in place; from
/// anywhere else it goes through the serializer. A source may keep it after a cancel; it then keeps the
/// machine, but not the transform and the observer (``FlatMapLatestOwner``).
@usableFromInline
final class FlatMapLatestLink<Value, Inner: ObservableType> {
    @usableFromInline let node: FlatMapLatestNode<Value, Inner>
    @usableFromInline let machine: FlatMapLatestMachine<Value, Inner>
    @usableFromInline let generation: Int

    @inlinable
    init(machine: FlatMapLatestMachine<Value, Inner>, generation: Int) {
        node = machine.node
        self.machine = machine
        self.generation = generation
    }

    @inlinable
    func send(_ event: Event<Inner.Value>) {
        if node.subscribingThread.load(ordering: .relaxed) == currentThread() {
            machine.receiveInPlace(generation, event)
        } else {
            node.serializer.submit(.inner(generation, event))
        }
    }
}

/// What reaches a `flatMapLatest` node: an outer event, or an event of the inner stream of a generation.
@usableFromInline
enum FlatMapLatestWork<Outer, InnerValue> {
    case outer(Event<Outer>)
    case inner(Int, Event<InnerValue>)
}
