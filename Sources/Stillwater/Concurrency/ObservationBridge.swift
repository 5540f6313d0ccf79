import Observation

extension Property where Value: Sendable {
    /// A property that follows `keyPath` of an `@Observable` object, so view models written with the
    /// Observation framework can feed Stillwater pipelines.
    ///
    /// The property reads the key path now, then follows the Observation framework's transactions
    /// (`Observations`, which re-registers observation tracking after each change and reads the value once
    /// the change is stored). New values arrive asynchronously, from a task, shortly after the change;
    /// several changes in one transaction arrive as one value.
    ///
    /// The object must be `Sendable`, because the tracking task reads `keyPath` from its own thread,
    /// outside any actor. So it is an `@Observable` class whose state is safe to read from any thread: for
    /// example a `final class` that keeps its state in a `Mutex` and registers access and mutation itself,
    /// as below. A `@MainActor` class does not fit: key paths to its properties are not `Sendable`. Marking
    /// a class of plain stored properties `@unchecked Sendable` compiles, but its properties are then read
    /// by the task while other threads write them, which is a data race.
    ///
    /// ```swift
    /// import Observation
    /// import Synchronization
    ///
    /// @Observable final class Player: Sendable {
    ///     @ObservationIgnored private let storage = Mutex(0)
    ///     var score: Int {
    ///         get { access(keyPath: \.score); return storage.withLock { $0 } }
    ///         set { withMutation(keyPath: \.score) { storage.withLock { $0 = newValue } } }
    ///     }
    /// }
    ///
    /// let player = Player()
    /// let score = Property(observing: player, \.score)
    /// print(score.value)
    /// player.score = 10
    /// for await value in score.values where value == 10 {   // arrives from the tracking task
    ///     print(value)
    ///     break
    /// }
    /// // Prints "0", "10"
    /// ```
    ///
    /// The tracking task holds `object`; it ends when the property and every subscription to it are
    /// released.
    ///
    /// - Parameters:
    ///   - object: The observable object: `Sendable`, and safe to read from any thread.
    ///   - keyPath: What to read from it.
    @available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *)
    public convenience init<Object: AnyObject & Observation.Observable & Sendable>(
        observing object: Object, _ keyPath: KeyPath<Object, Value> & Sendable
    ) {
        self.init(storage: ObservationTracker(object: object, keyPath: keyPath))
    }
}

/// Follows one key path of an observable object with `Observations` and stores each new value in a root
/// property.
@available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *)
final class ObservationTracker<Object: AnyObject & Observation.Observable & Sendable, Value: Sendable>:
    PropertyStorage, Sendable
{
    private let root: RootStorage<Value>
    private let task: Task<Void, Never>

    init(object: Object, keyPath: KeyPath<Object, Value> & Sendable) {
        let root = RootStorage(object[keyPath: keyPath])
        self.root = root
        task = Task {
            for await value in Observations({ object[keyPath: keyPath] }) {
                root.set(value)
            }
        }
    }

    deinit {
        task.cancel()
    }

    var value: Value { root.value }
    var scopes: ScopeCache { root.scopes }
    var host: any DeliveryHost { root.host }
    /// Derived properties observe the tracker, which keeps the task alive while they are observed.
    var derivation: DerivedCell<Value> { rootDerivation }

    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let subscription = root.subscribe(observer)
        // The subscription keeps the tracker (and so its task) alive while someone observes.
        return Subscription { [self] in
            _ = self
            subscription.cancel()
        }
    }
}
