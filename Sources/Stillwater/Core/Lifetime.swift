import Synchronization

/// How long something lasts (a connection, a screen, a request), as a value that subscriptions can be
/// tied to: ``ObservableType/take(during:)`` ends a stream when the lifetime ends, so a subscription made
/// for a connection needs no bag and no cleanup code.
///
/// A lifetime ends once, when its ``Token`` is told to ``Token/end()`` or is released, whichever comes
/// first. Keep the token with the thing that lasts (the connection handler) and hand the lifetime to
/// whatever should stop with it.
///
/// ```swift
/// let (lifetime, token) = Lifetime.make()
/// let ticks = PublishSubject<Int>()
/// let subscription = ticks.take(during: lifetime)
///     .subscribe(onNext: { print($0) }, onCompleted: { print("closed") })
/// ticks.send(1)
/// token.end()            // the connection closed
/// ticks.send(2)
/// // Prints "1", "closed"
/// ```
///
/// - Note: Ending is safe from any thread, and later calls do nothing. A stream tied to the lifetime
///   completes on the thread that ends it, before ``Token/end()`` returns, unless that stream is
///   delivering a value on another thread at that moment: then it completes right after that value, on
///   that thread, and no value follows the completion.
public final class Lifetime: Sendable {
    private let endedFlag = Atomic<Bool>(false)
    private let endings = ReplaySubject<Void>(bufferSize: 1)

    private init() {}

    /// A new lifetime, and the token that ends it.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let lifetime = Lifetime()
        return (lifetime, Token(lifetime))
    }

    /// Whether the lifetime has ended.
    public var hasEnded: Bool { endedFlag.load(ordering: .acquiring) }

    /// Sends one value and completes when the lifetime ends; a subscriber that comes after the end gets
    /// both at once.
    public var ended: Infallible<Void> {
        Infallible(never: endings.asObservable())
    }

    fileprivate func end() {
        guard !endedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        endings.send(())
        endings.complete()
    }

    /// What ends a ``Lifetime``: ``end()``, or releasing the token.
    public final class Token: Sendable {
        private let lifetime: Lifetime

        fileprivate init(_ lifetime: Lifetime) {
            self.lifetime = lifetime
        }

        /// Ends the lifetime. Later calls do nothing.
        public func end() {
            lifetime.end()
        }

        deinit {
            lifetime.end()
        }
    }
}
