/// A container that keeps subscriptions alive and cancels all of them together.
///
/// Release the bag (for example with the object that owns it) and every subscription in it is cancelled.
///
/// ```swift
/// let bag = SubscriptionBag()
/// let subject = PublishSubject<Int>()
/// subject.observe { print($0) }.store(in: bag)
/// subject.send(1)
/// bag.cancelAll()
/// subject.send(2)
/// // Prints "1"
/// ```
///
/// A bag is safe to use from any thread.
public final class SubscriptionBag: Sendable {
    private let subscriptions = Lock<[Subscription]>([])

    /// Creates an empty bag.
    public init() {}

    deinit {
        cancelAll()
    }

    /// Adds `subscription`; it stays alive until ``cancelAll()`` or until the bag is released.
    public func insert(_ subscription: Subscription) {
        subscriptions.withLock { $0.append(subscription) }
    }

    /// Cancels every subscription in the bag and empties it. The bag can be filled again afterwards.
    public func cancelAll() {
        let taken = subscriptions.withLock { list -> [Subscription] in
            let taken = list
            list = []
            return taken
        }
        for subscription in taken { subscription.cancel() }
    }

    /// How many subscriptions the bag holds.
    public var count: Int {
        subscriptions.withLock { $0.count }
    }
}
