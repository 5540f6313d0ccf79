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

    /// The number of observers Stillwater sources hold at this moment.
    ///
    /// It counts each observer registered with a subject, relay, property, store, handle or scope: the
    /// ones you register (`observe`, `subscribe`, `bind(to:)`, a `Recorder`), and the ones that operators
    /// (`merge`, `combineLatest`, `flatMapLatest`, `share`, `create`, …) and derived properties register
    /// upstream on your behalf while you are subscribed. Operators that only transform values (`map`,
    /// `filter`, `scan`, …) ride inside your observer and add nothing. It does not count a scope's link
    /// to its parent, which lives while the scope is held, observed or not: a held but unobserved scope
    /// or `Equatable` binding of a `MutableProperty`, a store or another such scope counts 0. A scope of
    /// a derived property, of a combination or of a binding whose value is not `Equatable` keeps what is
    /// under it observed while it is held, and that counts. An observer stops counting when its
    /// subscription is cancelled or released, or when its source ends.
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
