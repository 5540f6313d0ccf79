extension ObservableType {
    /// Runs side effects (logging, counting, starting a spinner) at points of each subscription's life,
    /// and passes every event on unchanged.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject
    ///     .do(onNext: { print("saw \($0)") }, onSubscribe: { print("subscribed") }, onCancel: { print("cancelled") })
    ///     .observe { print($0) }
    /// subject.send(1)
    /// subscription.cancel()
    /// // Prints "subscribed", "saw 1", "1", "cancelled"
    /// ```
    ///
    /// When each closure runs, once per subscription:
    /// - `onSubscribe`: when the result is subscribed, before this stream is.
    /// - `onNext`: for each value, before the value is passed on.
    /// - `onError`, `onCompleted`: when the stream ends, before the end is passed on.
    /// - `onCancel`: when the subscription is cancelled (or released, or stopped by a `take` further
    ///   down) before the stream ended, before the cancel reaches this stream, as Combine's
    ///   `handleEvents(receiveCancel:)`. Not after a completion or a failure (where RxSwift's `onDispose`
    ///   would run too), and at most once. When a cancel on one thread races with the end on another,
    ///   exactly one of `onCancel` and `onError`/`onCompleted` runs, and after `onCancel` the end is
    ///   not passed on.
    ///
    /// The closures run on the thread that delivers the event (or cancels), one at a time for events.
    public func `do`(
        onNext: ((Value) -> Void)? = nil,
        onError: ((any Error) -> Void)? = nil,
        onCompleted: (() -> Void)? = nil,
        onSubscribe: (() -> Void)? = nil,
        onCancel: (() -> Void)? = nil
    ) -> Observable<Value> {
        Observable.recipe({ observer in
            onSubscribe?()
            let upstream = SubscriptionSlot()
            let settled = DoSettlement(onCancel: onCancel)
            let next = observer.next
            let end = observer.end
            return self.subscribeEndingEarly(
                Observer(
                    next: onNext.map { onNext in { value in onNext(value); next(value) } } ?? next,
                    end: { termination in
                        guard settled.settle() != nil else { return }
                        switch termination {
                        case .completed: onCompleted?()
                        case .failed(let error): onError?(error)
                        }
                        end(termination)
                    },
                    early: upstream
                ),
                through: upstream,
                returning: Subscription {
                    settled.settle()?()
                    upstream.cancel()
                },
                for: observer
            )
        })
    }
}

extension InfallibleType {
    /// `do(onNext:onError:onCompleted:onSubscribe:onCancel:)` that keeps the fact that the stream never
    /// fails; there is no `onError`.
    public func `do`(
        onNext: ((Value) -> Void)? = nil,
        onCompleted: (() -> Void)? = nil,
        onSubscribe: (() -> Void)? = nil,
        onCancel: (() -> Void)? = nil
    ) -> Infallible<Value> {
        Infallible(never: asObservable().do(
            onNext: onNext, onCompleted: onCompleted, onSubscribe: onSubscribe, onCancel: onCancel))
    }
}

/// Whether a `do` subscription has ended or been cancelled: the first of the two wins, on any thread.
/// Settling releases `onCancel`, so an ended subscription no longer holds what it captured.
final class DoSettlement {
    /// The closure in a struct field, not the lock's state itself (Internal/README.md, `Lock.swift`).
    private struct Pending {
        var onCancel: (() -> Void)?
    }

    private let pending: LockedBox<Pending>

    init(onCancel: (() -> Void)?) {
        pending = LockedBox(Pending(onCancel: onCancel ?? {}))
    }

    /// Marks the subscription settled: `onCancel` (or a closure that does nothing) for the first call,
    /// `nil` for later ones.
    func settle() -> (() -> Void)? {
        pending.withLock { $0.onCancel.take() }
    }
}
