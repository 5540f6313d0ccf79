import Synchronization

/// Counts of what Stillwater holds right now, so tests can see leaks.
///
/// <!-- doc-test: skip the count is process-wide and the doc tests run in parallel; ResourcesTests checks this in an exit test -->
/// ```swift
/// let before = Resources.liveSubscriptions
/// let subject = PublishSubject<Int>()
/// let subscription = subject.map { $0 + 1 }.observe { _ in }
/// subscription.cancel()
/// print(Resources.liveSubscriptions == before)
/// // Prints "true"
/// ```
///
/// - Note: The count is process-wide. Tests that run in parallel change it too, so assert on it where
///   nothing else runs (for example inside an exit test, or a test run with `--no-parallel`).
public enum Resources {
    @usableFromInline
    static let observerCount = Atomic<Int>(0)

    /// The number of observers attached to Stillwater sources (subjects, relays, properties, handles and
    /// the internal nodes of operators) at this moment. It drops when a subscription is cancelled or
    /// released, and when its source ends.
    public static var liveSubscriptions: Int {
        observerCount.load(ordering: .relaxed)
    }

    @inlinable
    static func observerAdded() {
        observerCount.add(1, ordering: .relaxed)
    }

    @inlinable
    static func observerRemoved(_ count: Int = 1) {
        observerCount.subtract(count, ordering: .relaxed)
    }
}
