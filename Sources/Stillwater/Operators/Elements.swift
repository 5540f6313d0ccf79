extension ObservableType {
    /// Sends the first value, then completes and cancels its subscription to the stream; completes
    /// without a value if the stream completes first. The same as `take(1)`.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.firstElement()
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// subject.send(1)
    /// subject.send(2)
    /// // Prints "1", "done"
    /// ```
    ///
    /// Named `firstElement()` so that it does not clash with ``ObservableType/first()``, which awaits
    /// the first value in `async` code. Like Combine's `first()`, an empty stream gives an empty result
    /// (RxSwift's `first()` is a `Single` of an optional); add ``ObservableType/defaultIfEmpty(_:)`` for a fallback.
    public func firstElement() -> Observable<Value> {
        take(1)
    }

    /// Sends the last value when the stream completes, then completes; completes without a value if the
    /// stream sent none. A failure passes through, and the value held is dropped.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.lastElement().observe { print($0) }
    /// subject.send(1)
    /// subject.send(2)
    /// subject.complete()
    /// // Prints "2"
    /// ```
    ///
    /// The stream-returning counterpart of ``ObservableType/firstElement()``, named in the same way.
    public func lastElement() -> Observable<Value> {
        takeLast(1)
    }

    /// Sends the value at `index` (counting from 0), then completes and cancels its subscription to the
    /// stream.
    ///
    /// ```swift
    /// let subject = PublishSubject<String>()
    /// let subscription = subject.element(at: 1)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// for word in ["zero", "one", "two"] { subject.send(word) }
    /// // Prints "one", "done"
    /// ```
    ///
    /// If the stream completes before it has sent `index + 1` values, the result fails with
    /// ``ElementIndexOutOfRange`` (as RxSwift's `element(at:)` fails with `argumentOutOfRange`;
    /// Combine's `output(at:)` completes instead). A failure of the stream passes through.
    ///
    /// - Parameter index: The position of the value to send. Must not be negative.
    public func element(at index: Int) -> Observable<Value> {
        precondition(index >= 0, "element(at:) needs an index of 0 or more, got \(index).")
        return Observable.recipe({ observer in
            let upstream = SubscriptionSlot()
            let seen = DelivererBox(0)
            let next = observer.next
            let end = observer.end
            return self.subscribeEndingEarly(
                Observer(
                    next: { value in
                        guard seen.value <= index else { return }
                        seen.value += 1
                        guard seen.value == index + 1 else { return }
                        next(value)
                        end(.completed)
                        upstream.cancel()
                    },
                    end: { termination in
                        let count = seen.value
                        guard count <= index else { return }
                        seen.value = index + 1
                        guard case .completed = termination else { return end(termination) }
                        end(.failed(ElementIndexOutOfRange(index: index, count: count)))
                    },
                    early: upstream
                ),
                through: upstream, returning: Subscription(upstream), for: observer
            )
        })
    }

    /// Sends the last `count` values when the stream completes, in order, then completes. A failure
    /// passes through, and the values held are dropped.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.takeLast(2).observe { print($0) }
    /// for value in 1...5 { subject.send(value) }
    /// subject.complete()
    /// // Prints "4", "5"
    /// ```
    ///
    /// - Parameter count: How many of the last values to keep. `0` keeps none: the result only
    ///   completes when the stream does. Must not be negative.
    /// - Complexity: O(1) per value; the values held take memory for `count` values.
    public func takeLast(_ count: Int) -> Observable<Value> {
        precondition(count >= 0, "takeLast(_:) needs a count of 0 or more, got \(count).")
        if count == 0 { return droppingValues() }
        return Observable.recipe({ observer in
            let held = DelivererBox(RingBuffer<Value>(capacity: count))
            let next = observer.next
            let end = observer.end
            return self.subscribe(Observer(
                next: { value in _ = held.value.append(value) },
                end: { termination in
                    let values = held.value
                    held.value.removeAll()
                    if case .completed = termination {
                        for value in values { next(value) }
                    }
                    end(termination)
                },
                early: observer.early
            ))
        })
    }

    /// Drops every value and passes on only the end: a completion or a failure.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.ignoreElements().subscribe(onCompleted: { print("done") })
    /// subject.send(1)
    /// subject.send(2)
    /// subject.complete()
    /// // Prints "done"
    /// ```
    ///
    /// The result's value type is `Never`, as in RxSwift and Combine (`ignoreOutput()`).
    @inlinable
    public func ignoreElements() -> Observable<Never> {
        droppingValues()
    }

    /// This stream's end alone, as a stream of any value type.
    @inlinable
    func droppingValues<Output>() -> Observable<Output> {
        Observable<Output>.recipe({ observer in
            self.subscribe(Observer(next: { _ in }, end: observer.end, early: observer.early))
        })
    }

    /// Sends `value`, then completes, when the stream completes without having sent a value; otherwise
    /// passes everything through.
    ///
    /// ```swift
    /// let results = PublishSubject<String>()
    /// let subscription = results.defaultIfEmpty("no results").observe { print($0) }
    /// results.complete()
    /// // Prints "no results"
    /// ```
    ///
    /// A failure passes through, also from a stream that sent no value.
    @inlinable
    public func defaultIfEmpty(_ value: Value) -> Observable<Value> {
        Observable.recipe({ observer in
            let isEmpty = DelivererBox(true)
            let next = observer.next
            let end = observer.end
            return self.subscribe(Observer(
                next: { element in
                    isEmpty.value = false
                    next(element)
                },
                end: { termination in
                    if isEmpty.value, case .completed = termination { next(value) }
                    end(termination)
                },
                early: observer.early
            ))
        })
    }
}

/// The failure of ``ObservableType/element(at:)`` when the stream completes before it sent the value at
/// `index`.
///
/// ```swift
/// let subscription = Observable.of("a", "b").element(at: 5)
///     .subscribe(onError: { print($0) })
/// // Prints "ElementIndexOutOfRange(index: 5, count: 2)"
/// ```
public struct ElementIndexOutOfRange: Error, Equatable, Sendable {
    /// The index asked for.
    public let index: Int
    /// How many values the stream sent before it completed.
    public let count: Int

    /// Makes the error for `index` and a stream that sent `count` values.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }
}

extension InfallibleType {
    /// `firstElement()` that keeps the fact that the stream never fails.
    public func firstElement() -> Infallible<Value> {
        Infallible(never: asObservable().firstElement())
    }

    /// `lastElement()` that keeps the fact that the stream never fails.
    public func lastElement() -> Infallible<Value> {
        Infallible(never: asObservable().lastElement())
    }

    /// `takeLast(_:)` that keeps the fact that the stream never fails.
    public func takeLast(_ count: Int) -> Infallible<Value> {
        Infallible(never: asObservable().takeLast(count))
    }

    /// `ignoreElements()` that keeps the fact that the stream never fails.
    @inlinable
    public func ignoreElements() -> Infallible<Never> {
        Infallible(never: asObservable().ignoreElements())
    }

    /// `defaultIfEmpty(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func defaultIfEmpty(_ value: Value) -> Infallible<Value> {
        Infallible(never: asObservable().defaultIfEmpty(value))
    }
}
