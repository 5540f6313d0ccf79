/// A thread-safe place for the upstream subscription of an operator, which may change over time
/// (`flatMapLatest`) or arrive after events already did (a source that delivers during `subscribe`).
///
/// Putting a subscription into a cancelled slot cancels it at once; replacing one cancels the old one.
@usableFromInline
final class SubscriptionSlot: Cancellable, Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var current: Subscription?
        @usableFromInline var isCancelled = false
    }

    @usableFromInline let state = Lock(State())

    @inlinable init() {}

    /// Holds `subscription`, cancelling the one held before (or `subscription` itself if the slot is
    /// cancelled). Handed the subscription it holds, it keeps it.
    @usableFromInline
    func replace(with subscription: Subscription?) {
        let toCancel = state.withLock { state -> Subscription? in
            if state.isCancelled { return subscription }
            let old = state.current
            if let old, old === subscription { return nil }
            state.current = subscription
            return old
        }
        toCancel?.cancel()
    }

    /// Holds `subscription` if the slot holds nothing yet; cancels it if the slot already holds another
    /// one (put there while `subscription` was being made, as `catch` puts its fallback when its upstream
    /// fails during `subscribe`) or is cancelled.
    @usableFromInline
    func fill(with subscription: Subscription?) {
        let keep = state.withLock { state -> Bool in
            guard subscription != nil, !state.isCancelled, state.current == nil else { return false }
            state.current = subscription
            return true
        }
        if !keep { subscription?.cancel() }
    }

    /// Subscribes `observer` to `source` and holds the subscription, unless the slot is cancelled already:
    /// an operator of several inputs whose result ended while an earlier input was being subscribed
    /// does not subscribe the later ones (an endless synchronous source would never return).
    @inlinable
    func subscribe<Source: ObservableType>(
        to source: Source, with observer: @autoclosure () -> Observer<Source.Value>
    ) {
        guard !isCancelled else { return }
        replace(with: source.subscribe(observer()))
    }

    /// Cancels what the slot holds and everything put into it later.
    @usableFromInline
    func cancel() {
        let toCancel = state.withLock { state -> Subscription? in
            state.isCancelled = true
            let old = state.current
            state.current = nil
            return old
        }
        toCancel?.cancel()
    }

    /// Whether ``cancel()`` has been called.
    @usableFromInline
    var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }
}
