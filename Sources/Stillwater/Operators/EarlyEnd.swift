extension ObservableType {
    /// Subscribes for an operator that may end before this stream does (`take(while:)`, `element(at:)`,
    /// `take(until:)`, `do`'s cancel hook), and returns `result`, the subscription the operator hands its
    /// subscriber.
    ///
    /// `slot` receives the subscription to this stream and is also the early slot of `upstream`, so
    /// cancelling `slot` stops a source that is still sending inside `subscribe`. `result` goes into the
    /// subscriber's own early slot first, so a `take` further down stops this operator, and through it
    /// the source, in the same way. `result` must cancel `slot`.
    func subscribeEndingEarly<Output>(
        _ upstream: Observer<Value>, through slot: SubscriptionSlot, returning result: Subscription,
        for downstream: Observer<Output>
    ) -> Subscription {
        downstream.early?.replace(with: result)
        slot.replace(with: subscribe(upstream))
        return result
    }
}
