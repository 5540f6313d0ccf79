/// A value that changes over time and can be read as a ``Property``: ``Property`` and
/// ``MutableProperty``. Derived properties (``Property/combine(_:transform:)-6tuie``,
/// ``Property/combineLatest(_:)``) accept any mix of them.
public protocol PropertyProtocol<Value>: ObservableType {
    /// The current value.
    var value: Value { get }

    /// This value as a read-only ``Property`` (a view of the same value, not a copy).
    func asProperty() -> Property<Value>
}

extension Property: PropertyProtocol {
    /// Returns `self`.
    @inlinable
    public func asProperty() -> Property<Value> { self }
}

extension MutableProperty: PropertyProtocol {
    /// A read-only view of this property: the same as `Property(self)`.
    @inlinable
    public func asProperty() -> Property<Value> { Property(self) }
}

// MARK: - map and select

extension Property {
    /// A read-only property whose value is always `transform` of this one's.
    ///
    /// The result keeps a ``value`` (computed from this property's current value when read) and tells its
    /// observers of every change of this property. For an `Equatable` result, the deduplicating
    /// overload is chosen, which tells them only when the result changed.
    ///
    /// Derived properties of one root (a `MutableProperty`, a store's state) never show a state that never
    /// existed: one write to the root makes each of them compute once and emit at most once, from the new
    /// value only (see <doc:DerivedProperties>). They are lazy and shared: unobserved, they cost nothing
    /// per change, and any number of observers cost one computation per change.
    ///
    /// ```swift
    /// struct Point { var x = 0, y = 0 }
    /// let point = MutableProperty(Point())
    /// let summary = point.asProperty().map { "(\($0.x), \($0.y))" as Substring }
    /// let subscription = summary.observe { print($0) }
    /// point.value.x = 3
    /// print(summary.value)
    /// // Prints "(0, 0)", "(3, 0)", "(3, 0)"
    /// ```
    @inlinable
    public func map<T>(_ transform: @escaping (Value) -> T) -> Property<T> {
        Property<T>(storage: storage.derivation.mapped(transform))
    }

    /// A read-only property whose value is always `transform` of this one's, told to its observers
    /// only when it changed.
    ///
    /// ```swift
    /// let count = MutableProperty(1)
    /// let parity = count.map { $0.isMultiple(of: 2) ? "even" : "odd" }
    /// let subscription = parity.observe { print($0) }
    /// count.value = 3     // still odd: nothing printed
    /// count.value = 4
    /// // Prints "odd", "even"
    /// ```
    ///
    /// - Complexity: Per change of this property while observed, one call of `transform` and one
    ///   comparison, however many observers the result has.
    @inlinable
    public func map<T: Equatable>(_ transform: @escaping (Value) -> T) -> Property<T> {
        Property<T>(storage: storage.derivation.mapped(deduplicating: transform))
    }

    /// A read-only property of the value at `keyPath`, told to its observers on every change of this
    /// property. For an `Equatable` part, the deduplicating overload is chosen.
    @inlinable
    public func map<T>(_ keyPath: KeyPath<Value, T>) -> Property<T> {
        map { $0[keyPath: keyPath] }
    }

    /// A read-only property of the `Equatable` value at `keyPath`, told to its observers only when it
    /// changed. Unlike ``scope(_:)``, it joins the derived properties of its root, so it combines with
    /// them without glitches; ``scope(_:)`` is the faster choice for a part observed on its own.
    @inlinable
    public func map<T: Equatable>(_ keyPath: KeyPath<Value, T>) -> Property<T> {
        map { $0[keyPath: keyPath] }
    }

    /// A read-only property of what `selector` picks from this value, told to its observers only when
    /// it changed: the same as `map(_:)` for an `Equatable` result.
    ///
    /// ```swift
    /// struct Inbox { var messages: [String] = []; var filter = "" }
    /// let inbox = MutableProperty(Inbox())
    /// let unread = inbox.asProperty().select { $0.messages.count }
    /// let subscription = unread.observe { print($0) }
    /// inbox.value.filter = "a"          // the count did not change: nothing printed
    /// inbox.value.messages.append("hi")
    /// // Prints "0", "1"
    /// ```
    @inlinable
    public func select<T: Equatable>(_ selector: @escaping (Value) -> T) -> Property<T> {
        map(selector)
    }
}

extension MutableProperty {
    /// A read-only property whose value is always `transform` of this one's: the same as
    /// `asProperty().map(transform)` (see `map(_:)`).
    @inlinable
    public func map<T>(_ transform: @escaping (Value) -> T) -> Property<T> {
        asProperty().map(transform)
    }

    /// A read-only property whose value is always `transform` of this one's, told to its observers only
    /// when it changed: the same as `asProperty().map(transform)`.
    @inlinable
    public func map<T: Equatable>(_ transform: @escaping (Value) -> T) -> Property<T> {
        asProperty().map(transform)
    }

    /// A read-only property of the value at `keyPath`: the same as `asProperty().map(keyPath)`.
    @inlinable
    public func map<T>(_ keyPath: KeyPath<Value, T>) -> Property<T> {
        asProperty().map(keyPath)
    }

    /// A read-only property of the `Equatable` value at `keyPath`, told to its observers only when it
    /// changed: the same as `asProperty().map(keyPath)`.
    @inlinable
    public func map<T: Equatable>(_ keyPath: KeyPath<Value, T>) -> Property<T> {
        asProperty().map(keyPath)
    }

    /// A read-only property of what `selector` picks from this value, told to its observers only when
    /// it changed: the same as `asProperty().select(selector)`.
    @inlinable
    public func select<T: Equatable>(_ selector: @escaping (Value) -> T) -> Property<T> {
        asProperty().select(selector)
    }
}

// MARK: - combine and combineLatest

extension Property where Value == Any {
    /// A read-only property whose value is `transform` of the sources' values, told to its observers
    /// whenever a source changes.
    ///
    /// For an `Equatable` result, the deduplicating overload is chosen. See
    /// ``combine(_:transform:)-6tuie`` for the guarantees.
    @_disfavoredOverload
    @inlinable
    public static func combine<each Source: PropertyProtocol, Result>(
        _ sources: repeat each Source, transform: @escaping (repeat (each Source).Value) -> Result
    ) -> Property<Result> {
        combined(repeat (each sources).asProperty(), transform: transform, by: EveryValue.self, isEqual: { _, _ in false })
    }

    /// A read-only property whose value is `transform` of the sources' values, told to its observers
    /// only when it changed.
    ///
    /// `value` always reads the combination of the sources' current values. When the sources share a root
    /// (scopes, selects and maps of one `MutableProperty` or one `Store`), one change of the root makes
    /// the result compute once and emit at most once, from the root's new value only: never a mix of new
    /// and old parts. Sources of different roots are followed one root change at a time: a change of one
    /// root is one step, combined with the other sources' latest values (see <doc:DerivedProperties>).
    ///
    /// ```swift
    /// struct Search { var query = ""; var results: [String] = [] }
    /// let search = MutableProperty(Search())
    /// let query = search.scope(\.query)
    /// let count = search.select { $0.results.count }
    /// let status = Property.combine(query, count) { query, count in "\(count) matches for \"\(query)\"" }
    /// let subscription = status.observe { print($0) }
    /// search.value = Search(query: "swift", results: ["a", "b"])   // one write, one emission
    /// // Prints "0 matches for \"\"", "2 matches for \"swift\""
    /// ```
    ///
    /// - Complexity: Per change of the sources' root while observed, one call of `transform` when a
    ///   source changed, and one comparison; however many observers the result has.
    @inlinable
    public static func combine<each Source: PropertyProtocol, Result: Equatable>(
        _ sources: repeat each Source, transform: @escaping (repeat (each Source).Value) -> Result
    ) -> Property<Result> {
        combined(repeat (each sources).asProperty(), transform: transform, by: EqualValues.self, isEqual: ==)
    }

    /// A read-only property of the sources' values as a tuple, told to its observers whenever a source
    /// changes; glitch-free for sources of one root, as ``combine(_:transform:)-6tuie``.
    ///
    /// ```swift
    /// let width = MutableProperty(2)
    /// let height = MutableProperty(3)
    /// let size = Property.combineLatest(width, height)
    /// let subscription = size.observe { print("\($0.0)x\($0.1)") }
    /// height.value = 5
    /// // Prints "2x3", "2x5"
    /// ```
    @inlinable
    public static func combineLatest<each Source: PropertyProtocol>(
        _ sources: repeat each Source
    ) -> Property<(repeat (each Source).Value)> {
        latest(repeat (each sources).asProperty())
    }

    /// ``combine(_:transform:)-6tuie`` for two sources, told to its observers whenever a source changes; the
    /// pack form's guarantees, with code the optimiser specialises for the sources' types.
    @_disfavoredOverload
    @inlinable
    public static func combine<A: PropertyProtocol, B: PropertyProtocol, Result>(
        _ a: A, _ b: B, transform: @escaping (A.Value, B.Value) -> Result
    ) -> Property<Result> {
        combinedPair(a.asProperty(), b.asProperty(), transform: transform, by: EveryValue.self, isEqual: { _, _ in false })
    }

    /// ``combine(_:transform:)-6tuie`` for two sources, told to its observers only when the result changed;
    /// the pack form's guarantees, with code the optimiser specialises for the sources' types.
    @inlinable
    public static func combine<A: PropertyProtocol, B: PropertyProtocol, Result: Equatable>(
        _ a: A, _ b: B, transform: @escaping (A.Value, B.Value) -> Result
    ) -> Property<Result> {
        combinedPair(a.asProperty(), b.asProperty(), transform: transform, by: EqualValues.self, isEqual: ==)
    }

    /// The combination of two properties: a specialised cell of their graph when they share a root.
    @inlinable
    static func combinedPair<A, B, Result, Test: ChangeTest<Result>>(
        _ a: Property<A>, _ b: Property<B>, transform: @escaping (A, B) -> Result,
        by test: Test.Type, isEqual: @escaping (Result, Result) -> Bool
    ) -> Property<Result> {
        let (cellA, cellB) = (a.storage.derivation, b.storage.derivation)
        guard cellA.graph === cellB.graph else {
            return combined(a, b, transform: transform, by: test, isEqual: isEqual)
        }
        return Property<Result>(storage: combinedCell(cellA, cellB, graph: cellA.graph, transform: transform, by: test))
    }

    /// ``combineLatest(_:)`` over properties.
    @inlinable
    static func latest<each V>(_ sources: repeat Property<each V>) -> Property<(repeat each V)> {
        combined(repeat each sources, transform: packTuple, by: EveryValue.self, isEqual: { _, _ in false })
    }

    /// The combination of `sources`: a cell of their graph when they share a root, otherwise a
    /// ``CombinedStorage`` that follows each root.
    @inlinable
    static func combined<each V, Result, Test: ChangeTest<Result>>(
        _ sources: repeat Property<each V>, transform: @escaping (repeat each V) -> Result,
        by test: Test.Type, isEqual: @escaping (Result, Result) -> Bool
    ) -> Property<Result> {
        let cells = (repeat (each sources).storage.derivation)
        if let graph = shareOneGraph(repeat each cells) {
            return Property<Result>(storage: combinedCell(
                repeat each cells, graph: graph, transform: transform, by: test))
        }
        return Property<Result>(storage: CombinedStorage(repeat each sources, transform: transform, isEqual: isEqual))
    }
}

/// Its arguments as one tuple (what ``Property/combineLatest(_:)`` combines with).
@inlinable
func packTuple<each V>(_ values: repeat each V) -> (repeat each V) {
    (repeat each values)
}

// MARK: - Sources of several roots

/// One source's values inside a ``CombinedStorage``, guarded by the storage's `slots` lock: the value the
/// combination reads, and one delivered but not yet committed with the other sources of its root.
///
/// Not `Sendable`, and nothing needs it to be: slots live only inside the storage's `slots` lock, and
/// `value` and `pending` are read and written only there.
@usableFromInline final class Slot<Value> {
    /// The source's root deliverer: slots of one root are committed together.
    @usableFromInline let host: ObjectIdentifier
    @usableFromInline var value: Value?
    @usableFromInline var pending: Value?

    @inlinable init(host: ObjectIdentifier) { self.host = host }

    /// Moves a pending value of a source of `root` into place; returns whether there was one.
    @inlinable
    func commit(root: ObjectIdentifier) -> Bool {
        guard host == root, let pending else { return false }
        value = pending
        self.pending = nil
        return true
    }
}

/// A combination of properties of different roots: a root of its own, whose value is recomputed after
/// each root change of a source, once per change of that root.
///
/// While observed, it observes each source. A source's delivery stores the source's value in its slot as
/// pending, and asks the source's deliverer to commit after the delivery in progress: by then every source
/// of that root has its value of the same change pending, and the commit moves them into place together.
/// The recombination is queued behind the commits already waiting there, so when one combination feeds
/// another, both have committed before either passes a value on. A recombination reads committed values
/// only, so it never pairs a new part of one root with an old part of the same root. It carries the slots'
/// version, and only a newer version is stored, so recombinations racing on several threads keep the
/// newest.
///
/// Each period of being observed is a generation: when the last observer leaves, the slots are emptied
/// and the generation ends, and whatever the old subscriptions still deliver or commit is ignored. No lock
/// is held while sources are subscribed, cancelled or released, or while the user's transform runs.
///
/// `@unchecked Sendable`: the slots are read and written under `slots`; `appliedVersion` under the
/// core's lock; `activity` is a lock.
@usableFromInline final class CombinedStorage<Value>: PropertyStorage, @unchecked Sendable {
    @usableFromInline
    struct Activity {
        @usableFromInline var observers = 0
        @usableFromInline var generation: UInt64 = 0
        @usableFromInline var subscriptions: [Subscription] = []
        @inlinable init() {}
    }

    /// What the slots lock guards besides the slots: their version (one more for every commit or
    /// clearing) and the generation whose deliveries they accept.
    @usableFromInline
    struct SlotState: Sendable {
        @usableFromInline var version: UInt64 = 0
        @usableFromInline var generation: UInt64 = 0
        @inlinable init() {}
    }

    @usableFromInline let core: SourceCore<Value>
    @usableFromInline let scopes = ScopeCache()
    @usableFromInline let isEqual: (Value, Value) -> Bool
    /// The sources' current values, combined.
    @usableFromInline let current: () -> Value
    /// The slots' values, combined, with the slots' version; `nil` while a slot is empty. Takes `slots`.
    @usableFromInline let combineSlots: () -> (Value, UInt64)?
    /// Empties every slot and starts accepting generation `to`, unless `from` is given and the slots
    /// accept another generation already (a later start overtook the departure that asks). Returns the
    /// old values, to be released after the lock. Takes `slots`.
    @usableFromInline let resetSlots: (_ from: UInt64?, _ to: UInt64) -> [Any]
    /// Subscribes to one source each, for the generation given, storing into its slot.
    @usableFromInline let observeSources: [(CombinedStorage, UInt64) -> Subscription]
    @usableFromInline let slots: SharedLock<SlotState>
    /// The version of the last value stored in `core`. Under the core's lock.
    @usableFromInline @exclusivity(unchecked) var appliedVersion: UInt64 = 0
    @usableFromInline let activity = Lock(Activity())

    @inlinable
    init<each V>(
        _ sources: repeat Property<each V>, transform: @escaping (repeat each V) -> Value,
        isEqual: @escaping (Value, Value) -> Bool
    ) {
        let properties = (repeat each sources)
        let slots = (repeat Slot<each V>(host: ObjectIdentifier((each sources).storage.host)))
        let lock = SharedLock(SlotState())
        let current = { transform(repeat (each properties).value) }
        self.current = current
        self.isEqual = isEqual
        self.slots = lock
        core = SourceCore(.latestValue, current: current())
        let commit = { (root: ObjectIdentifier, generation: UInt64) -> Bool in
            lock.withLock { state in
                guard state.generation == generation else { return false }
                var committed = false
                for slot in repeat each slots {
                    if slot.commit(root: root) { committed = true }
                }
                if committed { state.version &+= 1 }
                return committed
            }
        }
        var observeSources: [(CombinedStorage, UInt64) -> Subscription] = []
        for (source, slot) in repeat (each properties, each slots) {
            observeSources.append { storage, generation in
                let host = source.storage.host
                let root = ObjectIdentifier(host)
                let recompute = { storage.recompute() }
                // Queued behind the delivery in progress on the source's root: the other sources of
                // that root have their values pending by then, and one commit serves them all.
                let commitAndRecompute = { if commit(root, generation) { host.run(recompute) } }
                return source.storage.subscribe(Observer(
                    next: { value in
                        // The value a slot gives up (or a refused one) is released here, unlocked.
                        var released = Optional(value)
                        lock.withLock { state in
                            guard state.generation == generation else { return }
                            swap(&released, &slot.pending)
                        }
                        _ = released
                        host.run(commitAndRecompute)
                    },
                    end: { _ in }
                ))
            }
        }
        self.observeSources = observeSources
        combineSlots = {
            let (values, version) = lock.withLock { state in ((repeat (each slots).value), state.version) }
            for value in repeat each values {
                if value == nil { return nil }
            }
            return (transform(repeat (each values).unsafelyUnwrapped), version)
        }
        resetSlots = { from, generation in
            lock.withLock { state -> [Any] in
                if let from, state.generation != from { return [] }
                var old: [Any] = []
                for slot in repeat each slots {
                    if let value = slot.value { old.append(value) }
                    if let pending = slot.pending { old.append(pending) }
                    slot.value = nil
                    slot.pending = nil
                }
                state.version &+= 1
                state.generation = generation
                return old
            }
        }
    }

    @usableFromInline
    var value: Value { current() }

    @usableFromInline
    var host: any DeliveryHost { core }

    @usableFromInline
    var derivation: DerivedCell<Value> { rootDerivation }

    /// Recombines the slots and stores the result when it is newer than the last stored and changed.
    @usableFromInline
    func recompute() {
        guard let (value, version) = combineSlots() else { return }
        let isEqual = self.isEqual
        core.updateCurrent { current in
            guard version > appliedVersion else { return false }
            appliedVersion = version
            if isEqual(current, value) { return false }
            current = value
            return true
        }
    }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let starting: UInt64? = activity.withLock { activity in
            activity.observers += 1
            guard activity.observers == 1 else { return nil }
            activity.generation &+= 1
            return activity.generation
        }
        if let generation = starting { start(generation) }
        let subscription = core.subscribe(observer)
        return Subscription { [self] in
            subscription.cancel()
            let ended = activity.withLock { activity -> (UInt64, [Subscription])? in
                activity.observers -= 1
                guard activity.observers == 0 else { return nil }
                defer {
                    activity.generation &+= 1
                    activity.subscriptions = []
                }
                return (activity.generation, activity.subscriptions)
            }
            guard let (generation, sources) = ended else { return }
            for source in sources { source.cancel() }
            // Accepts no generation until the next start; the old values are released here, unlocked.
            _ = resetSlots(generation, 0)
        }
    }

    /// The first observer arrived: start from the sources' current values, then follow them. Runs
    /// without a lock held; a start that a departure overtook cancels what it made.
    @usableFromInline
    func start(_ generation: UInt64) {
        let previous = resetSlots(nil, generation)
        _ = previous
        let fresh = current()
        let isEqual = self.isEqual
        core.updateCurrent { value in
            // Combinations from before the start must not overwrite the fresh value.
            appliedVersion = slots.withLock { $0.version }
            if isEqual(value, fresh) { return false }
            value = fresh
            return true
        }
        let subscriptions = observeSources.map { $0(self, generation) }
        let stale = activity.withLock { activity -> [Subscription] in
            guard activity.generation == generation else { return subscriptions }
            activity.subscriptions = subscriptions
            return []
        }
        for source in stale { source.cancel() }
    }
}
