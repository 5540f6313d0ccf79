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
    /// - Complexity: one object per subscription, and the ``Subscription`` returned. When this stream (and
    ///   the fallback, if any) ends while being subscribed, the subscription returned is
    ///   ``Subscription/empty`` and nothing is kept.
    @inlinable
    public func `catch`<Fallback: ObservableType>(
        _ handler: @escaping (any Error) -> Fallback
    ) -> Observable<Value> where Fallback.Value == Value {
        Observable.recipe({ observer in
            let link = CatchLink(handler, next: observer.next, end: observer.end)
            let subscription = self.attach(Observer(next: observer.next, end: { [link] in link.upstreamEnd($0) }))
            // Over while being subscribed (a synchronous stream, or a fallback that ended at once): nothing
            // is left to cancel.
            if link.isFinished { return nil }
            guard let subscription else { return Subscription(link) }
            // The fallback, if this stream failed while being subscribed, is already in the slot and
            // stays: `fill` then cancels the subscription of the stream that failed.
            link.fill(with: subscription)
            return Subscription(link)
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

/// One `catch` subscription: a slot holding this stream's subscription, then the fallback's in its place,
/// and whether the observer has had its terminal event. The upstream observer's `end` captures the link
/// alone, which is its context, so subscribing costs this one object.
@usableFromInline
final class CatchLink<Value, Fallback: ObservableType>: SubscriptionSlot, @unchecked Sendable
where Fallback.Value == Value {
    // @unchecked: the slot is locked and the flag atomic; the closures are touched only by the terminal
    // events (this stream's, then the fallback's), which come one after the other.
    /// The handler and the observer, let go of when the observer has had its terminal event.
    @usableFromInline @exclusivity(unchecked) var handler: ((any Error) -> Fallback)?
    @usableFromInline @exclusivity(unchecked) var next: ((Value) -> Void)?
    @usableFromInline @exclusivity(unchecked) var end: ((Termination) -> Void)?
    @usableFromInline let finished = Atomic<Bool>(false)

    @inlinable @inline(__always)
    init(
        _ handler: @escaping (any Error) -> Fallback, next: @escaping (Value) -> Void,
        end: @escaping (Termination) -> Void
    ) {
        self.handler = handler
        self.next = next
        self.end = end
        super.init()
    }

    /// Whether the observer has had its terminal event.
    @inlinable
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    @inlinable
    func upstreamEnd(_ termination: Termination) {
        if case .failed(let error) = termination {
            recover(from: error)
        } else {
            finish(termination)
        }
    }

    /// Subscribes the fallback for `error`. Kept out of line: most streams do not fail.
    @inlinable @inline(never)
    func recover(from error: any Error) {
        guard let handler = handler.take(), let next = next.take() else { return }
        // `.empty` for a fallback that left nothing to cancel: the slot must hold something, so that the
        // subscribing call's `fill` (if the failure came during it) cancels the failed stream's subscription.
        replace(with: handler(error).attach(Observer(next: next, end: { [self] in finish($0) })) ?? .empty)
    }

    @inlinable
    func finish(_ termination: Termination) {
        handler = nil
        next = nil
        finished.store(true, ordering: .releasing)
        guard let end = end.take() else { return }
        end(termination)
    }
}
