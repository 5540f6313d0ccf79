extension ObservableType {
    /// Sends, for each value of this stream, the latest value `other` has sent; nothing for the values
    /// that come before `other`'s first.
    ///
    /// ```swift
    /// let taps = PublishSubject<Void>()
    /// let text = BehaviorSubject("draft")
    /// let subscription = taps.withLatestFrom(text).observe { print($0) }
    /// taps.send(())
    /// text.send("final")
    /// text.send("final 2")
    /// taps.send(())
    /// // Prints "draft", "final 2"
    /// ```
    ///
    /// The same as ``withLatestFrom(_:resultSelector:)`` with a selector that keeps `other`'s value;
    /// it ends as that operator does.
    @inlinable
    public func withLatestFrom<Other: ObservableType>(_ other: Other) -> Observable<Other.Value> {
        withLatestFrom(other) { $1 }
    }

    /// Sends, for each value of this stream, `resultSelector` of that value and the latest value `other`
    /// has sent; nothing for the values that come before `other`'s first.
    ///
    /// ```swift
    /// let taps = PublishSubject<Int>()
    /// let name = PublishSubject<String>()
    /// let subscription = taps.withLatestFrom(name) { tap, name in "\(name) \(tap)" }
    ///     .observe { print($0) }
    /// taps.send(1)
    /// name.send("Ada")
    /// taps.send(2)
    /// taps.send(3)
    /// // Prints "Ada 2", "Ada 3"
    /// ```
    ///
    /// It follows RxSwift's `withLatestFrom`:
    /// - `other` is subscribed first, so a stream that replays (a ``BehaviorSubject``, a property)
    ///   gives its current value before this stream's first value is read.
    /// - Only this stream's values send: a value of `other` only becomes the latest.
    /// - This stream's completion completes the result. `other`'s completion does not end it: its last
    ///   value stays the latest for every later value of this stream. Either stream's failure fails it.
    ///   The end cancels both subscriptions.
    /// - Events from both streams reach the observer one at a time, on whichever thread sends them,
    ///   and an event sent from inside the observer is delivered after the current one.
    ///
    /// - Complexity: `resultSelector` runs once per value of this stream sent on; `other`'s latest
    ///   value is kept, nothing else. No allocation per value.
    @inlinable
    public func withLatestFrom<Other: ObservableType, Result>(
        _ other: Other,
        resultSelector: @escaping (Value, Other.Value) -> Result
    ) -> Observable<Result> {
        Observable<Result>.recipe({ observer in
            let node = WithLatestFromNode<Value, Other.Value, Result>(resultSelector, observer)
            // `other` first, so that a replaying one gives its value before this stream's first.
            node.secondarySlot.subscribe(to: other, with: Observer(
                next: { [node] in node.serializer.submit(.secondary(.next($0))) },
                end: { [node] in node.serializer.submit(.secondary($0.event())) }))
            node.primarySlot.subscribe(to: self, with: Observer(
                next: { [node] in node.primaryNext($0) },
                end: { [node] in node.serializer.submit(.primary($0.event())) }))
            return Subscription(node)
        })
    }
}

/// One `withLatestFrom` subscription: a serializer for the events of both inputs, and their slots.
///
/// A value of this stream that arrives while nobody delivers is handled in place (``primaryNext(_:)``),
/// without building an event for the serializer's queue; every other event goes through the queue.
@usableFromInline
final class WithLatestFromNode<Value, Other, Result>: Cancellable, @unchecked Sendable {
    // @unchecked: the state is the deliverer's (see `state`); the rest is immutable, locked or atomic.
    @usableFromInline typealias Work = TwoInputsEvent<Value, Other>

    @usableFromInline let serializer: Serializer<Work>
    @usableFromInline let primarySlot = SubscriptionSlot()
    @usableFromInline let secondarySlot = SubscriptionSlot()
    /// The selector, the observer and the latest value. The serializer's handler owns them, so they are
    /// let go of when the result ends or is cancelled, even if the subscription is kept; the node reads
    /// them unmanaged, as the deliverer while the handler is set, so that costs no reference counting.
    @usableFromInline let state: Unmanaged<WithLatestFromState<Value, Other, Result>>

    @inlinable
    init(_ resultSelector: @escaping (Value, Other) -> Result, _ observer: Observer<Result>) {
        let state = WithLatestFromState(resultSelector, observer, primarySlot, secondarySlot)
        self.state = .passUnretained(state)
        serializer = Serializer { [state] in state.receive($0) }
    }

    /// A value of this stream: sent on at once, in place, when nobody is delivering.
    @inlinable
    func primaryNext(_ value: Value) {
        if serializer.tryBeginInPlace() {
            if serializer.isOpen { state._withUnsafeGuaranteedRef { $0.send(value) } }
            serializer.endInPlace(keepOpen: true)
        } else {
            serializer.submit(.primary(.next(value)))
        }
    }

    @usableFromInline
    func cancel() {
        primarySlot.cancel()
        secondarySlot.cancel()
        serializer.cancel()
    }
}

/// What a `withLatestFrom` subscription's serializer handler owns; see ``WithLatestFromNode/state``.
@usableFromInline
final class WithLatestFromState<Value, Other, Result> {
    @usableFromInline let resultSelector: (Value, Other) -> Result
    @usableFromInline let observer: Observer<Result>
    @usableFromInline let primarySlot: SubscriptionSlot
    @usableFromInline let secondarySlot: SubscriptionSlot
    /// The other stream's latest value. The deliverer's.
    @usableFromInline @exclusivity(unchecked) var latest: Other?

    @inlinable
    init(
        _ resultSelector: @escaping (Value, Other) -> Result, _ observer: Observer<Result>,
        _ primarySlot: SubscriptionSlot, _ secondarySlot: SubscriptionSlot
    ) {
        self.resultSelector = resultSelector
        self.observer = observer
        self.primarySlot = primarySlot
        self.secondarySlot = secondarySlot
    }

    /// Sends `value` with the latest value of the other stream, if it has sent one.
    @inlinable @inline(__always)
    func send(_ value: Value) {
        if let other = latest { observer.next(resultSelector(value, other)) }
    }

    /// Handles one event as the deliverer; false once the result has ended. The end cancels both inputs.
    @inlinable
    func receive(_ work: TwoInputsEvent<Value, Other>) -> Bool {
        switch work {
        case .primary(.next(let value)):
            send(value)
            return true
        case .secondary(.next(let value)):
            latest = value
            return true
        case .secondary(.completed):
            return true
        case .primary(.completed):
            observer.end(.completed)
        case .primary(.error(let error)), .secondary(.error(let error)):
            observer.end(.failed(error))
        }
        primarySlot.cancel()
        secondarySlot.cancel()
        return false
    }
}
