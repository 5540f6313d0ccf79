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
        // `other` first, so that a replaying one gives its value before this stream's first.
        Observable.twoInputs(self, other, secondaryFirst: true) { observer, stop in
            let machine = WithLatestFromMachine<Value, Other.Value, Result>(resultSelector, observer, stop)
            return { machine.receive($0) }
        }
    }
}

/// The state of one `withLatestFrom` subscription, run by its serializer's handler, which alone holds
/// it: one thread at a time touches it (so `state` skips the runtime's exclusivity check, which would
/// check nothing). When the result ends or is cancelled, the serializer lets go of the handler, and so of
/// the machine, the selector and the observer, even if the subscription is kept.
@usableFromInline
final class WithLatestFromMachine<Value, Other, Result> {
    @usableFromInline
    enum State {
        /// The other stream has sent nothing yet: this stream's values send nothing.
        case waitingForOther
        /// The other stream's latest value; kept after the other stream completes.
        case latest(Other)
        /// The observer has had its end.
        case finished
    }

    @usableFromInline @exclusivity(unchecked) var state = State.waitingForOther
    @usableFromInline let resultSelector: (Value, Other) -> Result
    @usableFromInline let observer: Observer<Result>
    /// Cancels both inputs.
    @usableFromInline let stop: () -> Void

    @inlinable
    init(
        _ resultSelector: @escaping (Value, Other) -> Result, _ observer: Observer<Result>,
        _ stop: @escaping () -> Void
    ) {
        self.resultSelector = resultSelector
        self.observer = observer
        self.stop = stop
    }

    /// Handles one event of either input; false once the result has ended.
    @inlinable
    func receive(_ event: TwoInputsEvent<Value, Other>) -> Bool {
        switch event {
        case .primary(.next(let value)):
            switch state {
            case .waitingForOther: return true
            case .latest(let other):
                observer.next(resultSelector(value, other))
                return true
            case .finished: return false
            }
        case .secondary(.next(let value)):
            if case .finished = state { return false }
            state = .latest(value)
            return true
        case .secondary(.completed):
            if case .finished = state { return false }
            return true
        case .primary(.completed):
            finish(.completed)
        case .primary(.error(let error)), .secondary(.error(let error)):
            finish(.failed(error))
        }
        return false
    }

    /// Sends the result's end, once, and cancels both inputs.
    @inlinable
    func finish(_ termination: Termination) {
        if case .finished = state { return }
        state = .finished
        observer.end(termination)
        stop()
    }
}
