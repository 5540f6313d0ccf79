extension ObservableType {
    /// Sends this stream's values until `other` sends its first value, then completes and cancels both
    /// subscriptions.
    ///
    /// Use it to tie a stream to a lifetime: a connection's messages until it closes, a screen's updates
    /// until it goes away.
    ///
    /// ```swift
    /// let messages = PublishSubject<String>()
    /// let closed = PublishSubject<Void>()
    /// let subscription = messages.take(until: closed)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// messages.send("hello")
    /// closed.send(())
    /// messages.send("too late")
    /// // Prints "hello", "done"
    /// ```
    ///
    /// As in RxSwift:
    /// - `other`'s first value completes the result; if `other` fails, the result fails with its error;
    ///   if `other` completes without a value, nothing happens and this stream goes on.
    /// - `other` is subscribed first.
    /// - This stream's end ends the result, and cancels the subscription to `other`.
    ///
    /// Unlike RxSwift: if `other` sends a value (or fails) while it is being subscribed, the result ends
    /// at once and this stream is never subscribed. RxSwift subscribes this stream all the same, right
    /// after `other`, and drops what it sends; so a stream with side effects on subscription (a request)
    /// runs them there and not here.
    ///
    /// Once the result has ended, nothing more reaches the observer: a value this stream sends on
    /// another thread at the moment `other` sends is either delivered before the completion or not at
    /// all. A stream that sends while it is being subscribed stops as soon as `other` sends (from another
    /// thread), as it does for ``ObservableType/take(_:)``.
    ///
    /// - Complexity: O(1) per value. Every event goes through the operator's serializer, which is what
    ///   keeps the guarantee above. A subscription makes a few allocations: the serializer, two subscription
    ///   slots and their closures.
    public func take<Other: ObservableType>(until other: Other) -> Observable<Value> {
        Observable.recipe({ observer in
            let source = SubscriptionSlot()
            let stopper = SubscriptionSlot()
            let next = observer.next
            let end = observer.end
            let serializer = Serializer<TakeUntilWork<Value>> { work in
                switch work {
                case .value(let value):
                    next(value)
                    return true
                case .end(let termination):
                    stopper.cancel()
                    end(termination)
                    return false
                case .stop(let termination):
                    // The end first: a synchronous source sending on another thread stops when it sees
                    // the cancel, and whoever waits for its subscribe call to return then sees the end.
                    stopper.cancel()
                    end(termination)
                    source.cancel()
                    return false
                }
            }
            let result = Subscription {
                source.cancel()
                stopper.cancel()
                serializer.cancel()
            }
            stopper.replace(with: other.subscribe(Observer(
                next: { _ in serializer.submit(.stop(.completed)) },
                end: { termination in
                    if case .failed = termination { serializer.submit(.stop(termination)) }
                }
            )))
            // `other` sent (or failed) while it was being subscribed: the result has already ended.
            if source.isCancelled { return result }
            return self.subscribeEndingEarly(
                Observer(
                    next: { serializer.submit(.value($0)) },
                    end: { serializer.submit(.end($0)) },
                    early: source
                ),
                through: source, returning: result, for: observer
            )
        })
    }
}

extension ObservableType {
    /// Sends this stream's values until `lifetime` ends, then completes and cancels this stream's
    /// subscription. A lifetime that has already ended completes the result at once.
    ///
    /// Tie what serves one connection to the connection's lifetime, and it stops by itself when the
    /// connection closes:
    ///
    /// ```swift
    /// let board = BehaviorSubject("draft")
    /// let (lifetime, token) = Lifetime.make()
    /// let subscription = board.take(during: lifetime).observe { print("push", $0) }
    /// board.send("final")
    /// token.end()
    /// board.send("archived")
    /// // Prints "push draft", "push final"
    /// ```
    ///
    /// The same as ``take(until:)`` with ``Lifetime/ended``.
    public func take(during lifetime: Lifetime) -> Observable<Value> {
        take(until: lifetime.ended)
    }
}

extension InfallibleType {
    /// `take(until:)` that keeps the fact that the stream never fails, when `other` never fails either.
    public func take<Other: InfallibleType>(until other: Other) -> Infallible<Value> {
        Infallible(never: asObservable().take(until: other))
    }

    /// Sends this stream's values until `lifetime` ends; see ``ObservableType/take(during:)``.
    public func take(during lifetime: Lifetime) -> Infallible<Value> {
        Infallible(never: asObservable().take(during: lifetime))
    }
}

/// What reaches the serializer of `take(until:)`: a value or the end of the source, or the end that
/// `other` brings (its first value, or its failure).
enum TakeUntilWork<Value> {
    case value(Value)
    case end(Termination)
    case stop(Termination)
}
