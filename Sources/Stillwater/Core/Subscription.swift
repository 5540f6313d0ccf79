import Synchronization

/// The link between an observer and a stream; cancelling it, or releasing it, ends the link.
///
/// A subscription cancels itself when it is released from memory, so keep it for as long as you want
/// events: in a property, in a `Set<Subscription>` with ``store(in:)-(Set<Subscription>)``, or in a
/// ``SubscriptionBag``.
///
/// ```swift
/// let subject = PublishSubject<Int>()
/// let subscription = subject.observe { print($0) }
/// subject.send(1)
/// subscription.cancel()
/// subject.send(2)
/// // Prints "1"
/// ```
///
/// `cancel()` is safe from any thread, any number of times; only the first call has an effect. After it
/// returns, the observer receives nothing more from deliveries on the cancelling thread, and what the
/// subscription held is released.
public final class Subscription: Hashable, Sendable {
    @usableFromInline
    enum Target {
        case none
        case cancellable(any Cancellable)
        case action(() -> Void)
        case children([Subscription])
    }

    @usableFromInline let cancelled: Atomic<Bool>
    /// Written once before the subscription is shared, then only by the one thread that wins `cancelled`.
    @usableFromInline nonisolated(unsafe) var target: Target

    @usableFromInline
    init(target: Target, cancelled: Bool) {
        self.target = target
        self.cancelled = Atomic(cancelled)
    }

    @inlinable
    convenience init(_ cancellable: any Cancellable) {
        self.init(target: .cancellable(cancellable), cancelled: false)
    }

    /// Creates a subscription that runs `onCancel` once, on the first ``cancel()`` or when released.
    public convenience init(_ onCancel: @escaping () -> Void) {
        self.init(target: .action(onCancel), cancelled: false)
    }

    /// Creates a subscription that cancels all of `subscriptions` together.
    public convenience init(_ subscriptions: [Subscription]) {
        self.init(target: .children(subscriptions), cancelled: false)
    }

    /// A subscription that holds nothing and is already cancelled.
    ///
    /// It is one shared instance: a stream that finished while it was being subscribed returns it, and
    /// that costs no allocation. Cancelling it does nothing.
    public static let empty = Subscription(target: .none, cancelled: true)

    deinit {
        cancel()
    }

    /// Ends the link: the observer receives nothing more, and what the subscription held is released.
    ///
    /// Safe from any thread and from inside the observer itself; calls after the first do nothing.
    @inlinable
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let target = self.target
        self.target = .none
        switch target {
        case .none: break
        case .cancellable(let cancellable): cancellable.cancel()
        case .action(let action): action()
        case .children(let children): for child in children { child.cancel() }
        }
    }

    /// Whether ``cancel()`` has been called (or the subscription was created cancelled).
    public var isCancelled: Bool {
        cancelled.load(ordering: .acquiring)
    }

    /// Keeps this subscription in `set`, so it lives as long as the set holds it.
    public func store(in set: inout Set<Subscription>) {
        set.insert(self)
    }

    /// Keeps this subscription in `bag` until the bag is emptied or released.
    public func store(in bag: SubscriptionBag) {
        bag.insert(self)
    }

    /// Subscriptions are equal only to themselves.
    public static func == (lhs: Subscription, rhs: Subscription) -> Bool {
        lhs === rhs
    }

    /// Hashes the subscription's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// Something a ``Subscription`` can cancel without wrapping it in a closure.
///
/// Stillwater's own sources use it to hand out subscriptions without allocating a closure.
public protocol Cancellable: AnyObject {
    /// Ends what this object stands for; must be safe to call more than once and from any thread.
    func cancel()
}
