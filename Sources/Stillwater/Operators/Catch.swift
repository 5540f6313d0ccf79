import Synchronization

extension ObservableType {
    /// Recovers from a failure: when this stream fails, continues with the stream `handler` makes from
    /// the error. Its values follow the ones already sent, and its end is the end.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let pages = PublishSubject<String>()
    /// let subscription = pages
    ///     .catch { _ in Observable.of("cached page") }
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// pages.send("page 1")
    /// pages.fail(Offline())
    /// // Prints "page 1", "cached page", "done"
    /// ```
    ///
    /// - A completion passes through; `handler` runs only on a failure, at most once per subscription,
    ///   on the thread that delivered the failure.
    /// - To fail after all (an error you do not recover from), return ``Observable/failure(_:)``.
    /// - To try the same stream again instead, use ``retry(_:)``.
    /// - Cancelling cancels this stream or, after a failure, the fallback.
    /// - A running subscription may keep the `catch` stream (this stream and `handler`) alive; once it
    ///   ends or is cancelled, neither it nor the ``Subscription`` returned holds anything of them, and
    ///   the stream holds nothing of the subscription.
    /// - Complexity: a subscription allocates two small objects besides the ``Subscription`` returned
    ///   (and whatever this stream and the fallback allocate); values go straight from the stream that
    ///   runs to the observer, with nothing added per value. When this stream (and the fallback, if
    ///   any) ends while being subscribed, the subscription returned is ``Subscription/empty``.
    @inlinable
    public func `catch`<Fallback: ObservableType>(
        _ handler: @escaping (any Error) -> Fallback
    ) -> Observable<Value> where Fallback.Value == Value {
        Observable.recipe({ observer in
            CatchSubscription<Value, Fallback>.run(self, handler: handler, observer: observer)
        })
    }

    /// Recovers from a failure by sending `value`, then completing.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let requests = PublishSubject<Int>()
    /// let subscription = requests.catchAndReturn(0)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// requests.send(3)
    /// requests.fail(Offline())
    /// // Prints "3", "0", "done"
    /// ```
    ///
    /// The same as ``replaceError(with:)``; the two names are the ones RxSwift and Combine users know.
    public func catchAndReturn(_ value: Value) -> Observable<Value> {
        self.catch { _ in Observable.just(value) }
    }

    /// Replaces a failure with `value`, then completes; the same as ``catchAndReturn(_:)``.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let status = PublishSubject<String>()
    /// let subscription = status.replaceError(with: "offline").observe { print($0) }
    /// status.send("online")
    /// status.fail(Offline())
    /// // Prints "online", "offline"
    /// ```
    public func replaceError(with value: Value) -> Observable<Value> {
        catchAndReturn(value)
    }

    /// This stream as one that never fails: a failure is replaced by `value`, then the stream completes.
    ///
    /// The result is an ``Infallible``, so a `for await` loop over its ``InfallibleType/values`` needs no
    /// `try`, and the operators that cannot fail keep it infallible.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let readings = PublishSubject<Int>()
    /// let display = readings.asInfallible(onErrorJustReturn: -1).map { "\($0) °C" }
    /// let subscription = display.observe { print($0) }
    /// readings.send(21)
    /// readings.fail(Offline())
    /// // Prints "21 °C", "-1 °C"
    /// ```
    public func asInfallible(onErrorJustReturn value: Value) -> Infallible<Value> {
        Infallible(never: catchAndReturn(value))
    }
}

/// One `catch` subscription: which stream runs (this stream, then the fallback) and the observer, under
/// one lock, and the subscription of the stream that runs in a slot of its own.
///
/// Values never pass through it: each stream is subscribed with the observer's own `next`. Only the ends
/// come here. The first stream's failure moves the state from `.first` to `.fallback` and subscribes the
/// fallback; an end of the stream that runs moves it to `.finished` and is handed on. `.finished` keeps
/// nothing, so once the observer has had its end, or the subscription was cancelled, neither the handler
/// nor the observer is held.
@usableFromInline
final class CatchSubscription<Value, Fallback: ObservableType>: Cancellable, Sendable
where Fallback.Value == Value {
    @usableFromInline
    enum State {
        /// This stream runs; a failure is handed to `handler`.
        case first(handler: (any Error) -> Fallback, observer: Observer<Value>)
        /// The fallback runs.
        case fallback(observer: Observer<Value>)
        /// The observer has had its end, or the subscription was cancelled.
        case finished

        /// The observer, unless finished.
        @inlinable
        var observer: Observer<Value>? {
            switch self {
            case .first(_, let observer), .fallback(let observer): return observer
            case .finished: return nil
            }
        }
    }

    @usableFromInline let state: Lock<State>
    /// The subscription of the stream that runs. It is also the fallback's early slot, so a fallback that
    /// sends while it is being subscribed stops when this subscription is cancelled meanwhile.
    @usableFromInline let current = SubscriptionSlot()

    @inlinable
    init(handler: @escaping (any Error) -> Fallback, observer: Observer<Value>) {
        state = Lock(.first(handler: handler, observer: observer))
    }

    /// Subscribes `upstream` for `observer`; `nil` when everything ended during the call.
    @inlinable
    static func run<Upstream: ObservableType>(
        _ upstream: Upstream, handler: @escaping (any Error) -> Fallback, observer: Observer<Value>
    ) -> Subscription? where Upstream.Value == Value {
        let link = CatchSubscription(handler: handler, observer: observer)
        let subscription = upstream.attach(Observer(next: observer.next, end: { [link] in link.firstEnded($0) }))
        // If this stream failed during the call, the fallback's subscription is in the slot already, and
        // `fill` cancels this one instead of keeping it.
        link.current.fill(with: subscription)
        guard !link.isFinished else {
            link.current.cancel()
            return nil
        }
        return Subscription(link)
    }

    /// Whether the observer has had its end, or the subscription was cancelled.
    @inlinable
    var isFinished: Bool {
        state.withLock { state in
            if case .finished = state { return true }
            return false
        }
    }

    /// The end of this stream: a completion is the result's; a failure starts the fallback.
    @inlinable
    func firstEnded(_ termination: Termination) {
        guard case .failed(let error) = termination else {
            return finish(termination, from: .first)
        }
        let recovery = state.withLock { state -> (handler: (any Error) -> Fallback, observer: Observer<Value>)? in
            guard case .first(let handler, let observer) = state else { return nil }
            state = .fallback(observer: observer)
            return (handler, observer)
        }
        guard let recovery else { return }
        recover(from: error, recovery.handler, recovery.observer)
    }

    /// Subscribes the fallback. Kept out of line: most streams do not fail.
    @usableFromInline @inline(never)
    func recover(from error: any Error, _ handler: (any Error) -> Fallback, _ observer: Observer<Value>) {
        let fallback = handler(error).attach(Observer(
            next: observer.next, end: { [self] in finish($0, from: .fallback) }, early: current))
        // `.empty` when the fallback left nothing to cancel: the slot must hold something, so that a
        // `fill` with the failed stream's subscription (a failure during the first subscribe call) cancels
        // it instead of keeping it.
        current.replace(with: fallback ?? .empty)
        if isFinished { current.replace(with: nil) }
    }

    @usableFromInline
    enum Phase { case first, fallback }

    /// Hands the observer `termination` if the stream of `phase` is the one that runs, and lets go of the
    /// observer and the ended stream's subscription.
    @inlinable
    func finish(_ termination: Termination, from phase: Phase) {
        // The old state is let go of after the lock, so what it captured is released outside it.
        let old = state.withLock { state -> State in
            switch (state, phase) {
            case (.first, .first), (.fallback, .fallback):
                defer { state = .finished }
                return state
            default:
                return .finished
            }
        }
        guard let observer = old.observer else { return }
        observer.end(termination)
        current.replace(with: nil)
    }

    @usableFromInline
    func cancel() {
        let old = state.withLock { state -> State in
            defer { state = .finished }
            return state
        }
        current.cancel()
        _ = old
    }
}
