/// How a stream ended, without a value type: what a terminal ``Event`` carries. Operators that change the
/// value type pass their downstream's end handler up unchanged, with no wrapping closure.
@usableFromInline
enum Termination: Sendable {
    case completed
    case failed(any Error)

    /// This end as an event of any value type.
    @inlinable
    func event<Value>() -> Event<Value> {
        switch self {
        case .completed: return .completed
        case .failed(let error): return .error(error)
        }
    }
}

/// The receiving end of a subscription inside the package: values and the end arrive through separate
/// closures, so a value crosses an operator as itself (one call, no ``Event`` to build and switch on).
///
/// The public form, an `(Event<Value>) -> Void` closure, converts both ways: ``init(_:)`` wraps one, and
/// ``eventHandler`` hands back the original closure when there was one, so a chain that goes from events
/// to an observer and back adds no layer.
@usableFromInline
struct Observer<Value> {
    @usableFromInline let next: (Value) -> Void
    @usableFromInline let end: (Termination) -> Void
    /// The event closure this observer was made from, if any.
    @usableFromInline let events: ((Event<Value>) -> Void)?
    /// What few observers carry besides their closures (``inPlace``, ``early``), in one object, so that
    /// the common observer, which has neither, stays small and cheap to copy.
    @usableFromInline let extras: ObserverExtras?

    /// How a scope reads a store's new state where it lies, instead of receiving a copy; see
    /// ``InPlaceReader``.
    @inlinable
    var inPlace: InPlaceReader? { extras?.inPlace }

    /// Where a source that sends while it is being subscribed (``Observable/create(_:)``, and so
    /// `from`, `of`, `just`) puts the subscription it will return, before it sends anything. An observer
    /// that has had enough before `subscribe` returns (`take`) cancels the slot, and the producer stops:
    /// `Observable.from(an endless sequence).take(3)` returns. A source must put there exactly the
    /// subscription it returns (the slot keeps it when handed the same one again). Value-stage operators
    /// pass it on (``stage(_:)``), and so do the operators that end early and `flatMap`/`concat` for
    /// their outer stream; other operators with a serializer do not, so a source behind them is read to
    /// its end.
    @inlinable
    var early: SubscriptionSlot? { extras?.early }

    @inlinable
    init(
        next: @escaping (Value) -> Void, end: @escaping (Termination) -> Void, inPlace: InPlaceReader? = nil,
        early: SubscriptionSlot? = nil
    ) {
        self.next = next
        self.end = end
        self.events = nil
        self.extras = inPlace == nil && early == nil ? nil : ObserverExtras(inPlace: inPlace, early: early)
    }

    @inlinable
    init(_ events: @escaping (Event<Value>) -> Void) {
        self.next = { events(.next($0)) }
        self.end = { events($0.event()) }
        self.events = events
        self.extras = nil
    }

    /// The observer a value-stage operator (`map`, `filter`, `scan`, …) subscribes upstream with: `next`
    /// in place of this observer's, and this observer's end, and ``early`` slot unchanged.
    @inlinable
    func stage<Upstream>(_ next: @escaping (Upstream) -> Void) -> Observer<Upstream> {
        Observer<Upstream>(next: next, end: end, early: early)
    }

    /// This observer as one event closure.
    @inlinable
    var eventHandler: (Event<Value>) -> Void {
        if let events { return events }
        let next = self.next
        let end = self.end
        return { event in
            switch event {
            case .next(let value): next(value)
            case .error(let error): end(.failed(error))
            case .completed: end(.completed)
            }
        }
    }
}

/// The rarely used parts of an ``Observer``: a scope's in-place reader, and the early slot of an
/// observer that may stop a producer while it is being subscribed.
@usableFromInline
final class ObserverExtras {
    @usableFromInline let inPlace: InPlaceReader?
    @usableFromInline let early: SubscriptionSlot?

    @inlinable
    init(inPlace: InPlaceReader?, early: SubscriptionSlot?) {
        self.inPlace = inPlace
        self.early = early
    }
}

/// The two steps by which a scope of a store follows the store's state without a copy of it.
///
/// A store changes its state in place, under its lock, as the deliverer. Handing every observer a copy of
/// the whole state costs a retain and a release of each of its reference-counted parts per action. A scope
/// only needs its slice, so a store calls ``prepare`` while it still holds the lock, with the address of
/// the new state (the scope reads and compares its slice there), and then, after the lock, in delivery
/// order, ``flush`` (the scope delivers the slice if it changed). Only observers without a reader get a
/// copy, and only when there are some.
@usableFromInline
struct InPlaceReader {
    /// Reads the slice from the state at the address given. Runs under the store's lock.
    @usableFromInline let prepare: (UnsafeRawPointer) -> Void
    /// Delivers what ``prepare`` found, if it changed.
    @usableFromInline let flush: () -> Void

    @inlinable
    init(prepare: @escaping (UnsafeRawPointer) -> Void, flush: @escaping () -> Void) {
        self.prepare = prepare
        self.flush = flush
    }
}
