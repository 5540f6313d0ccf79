extension ObservableType {
    /// Sends, at each value of `sampler`, the latest value of this stream, if a new one arrived since
    /// the last sample; a tick with nothing new sends nothing.
    ///
    /// ```swift
    /// let position = PublishSubject<Int>()
    /// let frames = PublishSubject<Void>()
    /// let subscription = position.sample(frames).observe { print($0) }
    /// position.send(1)
    /// position.send(2)
    /// frames.send(())
    /// frames.send(())
    /// position.send(3)
    /// frames.send(())
    /// // Prints "2", "3"
    /// ```
    ///
    /// It follows RxSwift's `sample` with its default (no default value):
    /// - A value is sent at most once: a sample takes it, and later ticks send nothing until this
    ///   stream sends again.
    /// - `sampler`'s completion is a last tick: it sends the value waiting, if any.
    /// - This stream's completion does not send the value waiting at once: the result completes at the
    ///   next tick, after sending it, or at once if `sampler` has already completed. (RxSwift never
    ///   completes when the sampler completed first; nothing can be sent after that, so here this
    ///   stream's completion ends the result.)
    /// - Either stream's failure fails the result at once; a value waiting is dropped. The end cancels
    ///   both subscriptions.
    /// - This stream is subscribed before `sampler`. Events from both reach the observer one at a time,
    ///   on whichever thread sends them, and an event sent from inside the observer is delivered after
    ///   the current one.
    ///
    /// - Complexity: One value kept (the one waiting); no allocation per value.
    @inlinable
    public func sample<Sampler: ObservableType>(_ sampler: Sampler) -> Observable<Value> {
        Observable.twoInputs(self, sampler, secondaryFirst: false) { observer, stop in
            var state = SampleState<Value>.sampling(waiting: nil)
            return { event in
                let (value, end) = state.take(event)
                if let value { observer.next(value) }
                guard let end else { return true }
                observer.end(end)
                stop()
                return false
            }
        }
    }
}

/// The state machine of `sample`, run on its serializer.
@usableFromInline
enum SampleState<Value> {
    /// Both streams run; `waiting` is the value the next tick sends.
    case sampling(waiting: Value?)
    /// The source completed; the next tick sends `waiting` (if any) and completes.
    case sourceCompleted(waiting: Value?)
    /// The sampler completed (its completion sent the value waiting); the source's completion completes.
    case samplerCompleted
    case ended

    /// Takes one event of either stream: returns the value to send, if any, then the terminal event to
    /// send, if the result ends.
    @inlinable
    mutating func take<Tick>(_ event: TwoInputsEvent<Value, Tick>) -> (Value?, Termination?) {
        switch (self, event) {
        case (.ended, _):
            return (nil, nil)
        case (_, .primary(.error(let error))), (_, .secondary(.error(let error))):
            self = .ended
            return (nil, .failed(error))
        case (.sampling, .primary(.next(let value))):
            self = .sampling(waiting: value)
            return (nil, nil)
        case (.sampling(let waiting), .primary(.completed)):
            self = .sourceCompleted(waiting: waiting)
            return (nil, nil)
        case (.sampling(let waiting), .secondary(.next)):
            self = .sampling(waiting: nil)
            return (waiting, nil)
        case (.sampling(let waiting), .secondary(.completed)):
            self = .samplerCompleted
            return (waiting, nil)
        case (.sourceCompleted(let waiting), .secondary):
            self = .ended
            return (waiting, .completed)
        case (.samplerCompleted, .primary(.completed)):
            self = .ended
            return (nil, .completed)
        case (.samplerCompleted, _), (.sourceCompleted, .primary):
            return (nil, nil)
        }
    }
}
