// The plumbing of a `flatMap`, `concatMap` or `flatMapFirst` subscription besides its engine and machine
// (FlatMap.swift): what its serializer queues, and where the running inner streams' subscriptions are kept.

/// What reaches a `flatMap` node: an outer event, or an event of the inner stream with an id.
enum MergeInnerWork<Outer, InnerValue> {
    case outer(Event<Outer>)
    case inner(Int, Event<InnerValue>)
}

/// The subscriptions of the running inner streams of a `flatMap`, by id. After ``cancel()`` it cancels
/// what it held and every subscription inserted later.
final class InnerSubscriptions: Sendable {
    private let state = Lock<(running: [Int: Subscription], isCancelled: Bool)>(([:], false))

    func insert(_ subscription: Subscription, for id: Int) {
        let cancelled = state.withLock { state in
            if !state.isCancelled { state.running[id] = subscription }
            return state.isCancelled
        }
        if cancelled { subscription.cancel() }
    }

    /// Forgets the subscription of an inner stream that completed.
    func remove(_ id: Int) {
        let removed = state.withLock { $0.running.removeValue(forKey: id) }
        withExtendedLifetime(removed) {}
    }

    func cancel() {
        let running = state.withLock { state in
            state.isCancelled = true
            defer { state.running = [:] }
            return state.running
        }
        for subscription in running.values { subscription.cancel() }
    }
}
