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
        Observable.recipe({ observer in CatchSubscription.run(self, handler: handler, observer: observer) })
    }
}

/// One `catch` subscription: which stream runs (this stream, then the fallback) and its subscription,
/// under one lock.
///
/// Values never pass through it: each stream is subscribed with the observer's own `next`. Only the ends
/// come here. The first stream's failure moves the state from `.first` to `.fallback` and subscribes the
/// fallback; an end of the stream that runs moves it to `.finished` and is handed on. `.finished` keeps
/// nothing, so once the observer has had its end, or the subscription was cancelled, neither the handler
/// nor the observer is held.
///
/// The state holds closures made where the subscription is made (`recover` subscribes the fallback with
/// the observer's `next`), so this type does not depend on the value type: its deallocation needs no
/// type metadata lookups, which a subscription made per value (as `flatMapLatest` makes) would pay.
@usableFromInline
final class CatchSubscription: Cancellable {
    @usableFromInline
    enum State {
        /// This stream runs, with its subscription once its subscribe call has returned; a failure is
        /// handed to `recover`, which subscribes the fallback.
        case first(recover: (any Error, CatchSubscription) -> Void, end: (Termination) -> Void, Subscription?)
        /// The fallback runs. Its subscription is in `slot`, which is also its early slot: a fallback that
        /// sends while it is being subscribed stops when this subscription is cancelled meanwhile.
        case fallback(end: (Termination) -> Void, slot: SubscriptionSlot)
        /// The observer has had its end, or the subscription was cancelled.
        case finished

        /// What the state holds that a cancel must cancel.
        @inlinable
        func cancelSubscription() {
            switch self {
            case .first(_, _, let subscription): subscription?.cancel()
            case .fallback(_, let slot): slot.cancel()
            case .finished: break
            }
        }
    }

    @usableFromInline
    enum Phase { case first, fallback }

    /// Held around every touch of `current`.
    @usableFromInline let lock = Lock(())
    /// Under `lock`. Kept here rather than in a ``LockedBox``: a subscription is made per inner stream of
    /// `flatMapLatest`, where a box would cost an allocation each.
    @usableFromInline @exclusivity(unchecked) var current: State

    @inlinable
    init(recover: @escaping (any Error, CatchSubscription) -> Void, end: @escaping (Termination) -> Void) {
        current = .first(recover: recover, end: end, nil)
    }

    /// Runs `body` with the state, under `lock`.
    @inlinable @inline(__always)
    func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { _ in body(&current) }
    }

    /// Subscribes `upstream` for `observer`; `nil` when everything ended during the call.
    @inlinable
    static func run<Upstream: ObservableType, Fallback: ObservableType>(
        _ upstream: Upstream, handler: @escaping (any Error) -> Fallback, observer: Observer<Upstream.Value>
    ) -> Subscription? where Fallback.Value == Upstream.Value {
        let next = observer.next
        let link = CatchSubscription(recover: { error, link in
            let slot = link.fallbackSlot
            let fallback = handler(error).attach(Observer(
                next: next, end: { [link] in link.finish($0, from: .fallback) }, early: slot))
            link.fallbackStarted(fallback, in: slot)
        }, end: observer.end)
        let subscription = upstream.attach(Observer(next: next, end: { [link] in link.firstEnded($0) }))
        // Kept while this stream runs. If it failed during the call, the fallback runs instead, and this
        // stream's subscription is cancelled; so it is if everything ended meanwhile.
        let (kept, finished) = link.withState { state -> (Bool, Bool) in
            switch state {
            case .first(let recover, let end, _):
                state = .first(recover: recover, end: end, subscription)
                return (true, false)
            case .fallback: return (false, false)
            case .finished: return (false, true)
            }
        }
        if !kept { subscription?.cancel() }
        return finished ? nil : Subscription(link)
    }

    /// The end of this stream: a completion is the result's; a failure starts the fallback.
    @inlinable
    func firstEnded(_ termination: Termination) {
        guard case .failed(let error) = termination else {
            return finish(termination, from: .first)
        }
        let recover = withState { state -> ((any Error, CatchSubscription) -> Void)? in
            guard case .first(let recover, let end, _) = state else { return nil }
            state = .fallback(end: end, slot: SubscriptionSlot())
            return recover
        }
        recover?(error, self)
    }

    /// The fallback's slot, while it runs.
    @usableFromInline
    var fallbackSlot: SubscriptionSlot? {
        withState { state in
            if case .fallback(_, let slot) = state { return slot }
            return nil
        }
    }

    /// Keeps the fallback's subscription in its slot. Out of line: most streams do not fail.
    @usableFromInline @inline(never)
    func fallbackStarted(_ fallback: Subscription?, in slot: SubscriptionSlot?) {
        guard let slot else {
            // Cancelled before the fallback was subscribed.
            fallback?.cancel()
            return
        }
        // Cancelled meanwhile, or ended: the slot is cancelled, and cancels `fallback` at once.
        slot.replace(with: fallback)
    }

    /// Hands the observer `termination` if the stream of `phase` is the one that runs, and lets go of the
    /// observer and the ended stream's subscription.
    @inlinable
    func finish(_ termination: Termination, from phase: Phase) {
        // The old state is let go of after the lock, so what it captured is released outside it.
        let old = withState { state -> State in
            switch (state, phase) {
            case (.first, .first), (.fallback, .fallback):
                defer { state = .finished }
                return state
            default:
                return .finished
            }
        }
        switch old {
        case .first(_, let end, _): end(termination)
        case .fallback(let end, let slot):
            end(termination)
            slot.cancel()
        case .finished: return
        }
    }

    @usableFromInline
    func cancel() {
        let old = withState { state -> State in
            defer { state = .finished }
            return state
        }
        old.cancelSubscription()
    }
}
