extension ObservableType {
    /// Turns every event into a value: each value, and then the end (a completion or a failure), arrives as
    /// an ``Event``, after which the result completes. The result itself never fails.
    ///
    /// Use it to handle a failure as data (log it, count it, show it) without ending the pipeline's
    /// observer, and ``dematerialize()`` to turn the events back into a stream.
    ///
    /// ```swift
    /// struct Broken: Error {}
    /// let source = PublishSubject<Int>()
    /// let subscription = source.materialize()
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// source.send(1)
    /// source.fail(Broken())
    /// // Prints "next(1)", "error(Broken())", "done"
    /// ```
    public func materialize() -> Observable<Event<Value>> {
        Observable<Event<Value>>.recipe({ observer in
            let next = observer.next
            let end = observer.end
            return self.subscribe(Observer(
                next: { next(.next($0)) },
                end: { termination in
                    next(termination.event())
                    end(.completed)
                }
            ))
        })
    }
}

extension ObservableType {
    /// Turns a stream of ``Event`` values back into the events they describe: the inverse of
    /// ``materialize()``. A `.completed` or `.error` value ends the result; values after it are ignored.
    ///
    /// ```swift
    /// let events = PublishSubject<Event<Int>>()
    /// let subscription = events.dematerialize()
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// events.send(.next(1))
    /// events.send(.completed)
    /// events.send(.next(2))
    /// // Prints "1", "done"
    /// ```
    ///
    /// A completion or failure of the stream of events itself ends the result in the same way.
    public func dematerialize<Element>() -> Observable<Element> where Value == Event<Element> {
        Observable<Element>.recipe({ observer in
            let ended = DelivererBox(false)
            let upstream = SubscriptionSlot()
            let next = observer.next
            let end = observer.end
            let finish = { (termination: Termination) in
                guard !ended.value else { return }
                ended.value = true
                end(termination)
                upstream.cancel()
            }
            upstream.replace(with: self.subscribe(Observer(
                next: { event in
                    guard !ended.value else { return }
                    switch event {
                    case .next(let value): next(value)
                    case .completed: finish(.completed)
                    case .error(let error): finish(.failed(error))
                    }
                },
                end: finish
            )))
            return Subscription(upstream)
        })
    }
}
