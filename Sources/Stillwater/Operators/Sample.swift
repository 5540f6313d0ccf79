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
            var waiting: Value?
            var sourceDone = false
            var samplerDone = false
            func sendWaiting() {
                guard let value = waiting else { return }
                waiting = nil
                observer.next(value)
            }
            return { event in
                switch event {
                case .primary(.next(let value)):
                    if !samplerDone { waiting = value }
                    return true
                case .primary(.completed):
                    sourceDone = true
                    guard samplerDone else { return true }
                case .secondary(.next):
                    sendWaiting()
                    guard sourceDone else { return true }
                case .secondary(.completed):
                    samplerDone = true
                    sendWaiting()
                    guard sourceDone else { return true }
                case .primary(.error(let error)), .secondary(.error(let error)):
                    waiting = nil
                    observer.end(.failed(error))
                    stop()
                    return false
                }
                observer.end(.completed)
                stop()
                return false
            }
        }
    }
}
