/// The shared storage behind `scope(\.path)`, a scope's node: one per key path per property, however many
/// observers.
///
/// The node observes its parent once, through its ``ScopeFollower``. On each parent change the follower reads
/// its slice once and compares it once with the last slice; only a changed slice reaches the node's own
/// observers. The parent keeps the node weakly (in its ``ScopeCache``), so a node lives while a `Property`
/// or a subscription uses it, and is freed, with its subscription to the parent, when the last one goes.
///
/// The parent's subscription holds the follower strongly and never the node, so delivery loads no weak
/// reference and the follower needs no side table for its reference counts: weak references cost a
/// slow-path retain and release on every delivery.
@usableFromInline
final class ScopeStorage<Root, Value: Equatable>: PropertyStorage, ScopeCacheNode, Sendable {
    @usableFromInline let parent: any PropertyStorage<Root>
    @usableFromInline let follower: ScopeFollower<Root, Value>
    @usableFromInline let scopes = ScopeCache()
    @usableFromInline let parentSubscription: Subscription

    /// The node of `keyPath` on `parent`, shared: made on first use, then handed back while it lives.
    ///
    /// Callers pass the parent as an existential on purpose: with `Root` and `Value` known, the node's
    /// delivery path specialises in the caller's module (a generic `Self` would keep it unspecialised,
    /// paying a generic-metadata lookup per delivery).
    @inlinable
    static func shared(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) -> ScopeStorage {
        parent.scopes.node(for: keyPath) { ScopeStorage(parent: parent, keyPath: keyPath) }
    }

    @inlinable
    init(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) {
        self.parent = parent
        let follower = ScopeFollower(keyPath: keyPath, initial: parent.value[keyPath: keyPath], host: parent.host)
        self.follower = follower
        // The parent's first delivery is its current value; if it moved since `initial` was read, the
        // follower's comparison passes it on, otherwise it is dropped as unchanged. It is queued on the
        // host before any subscriber of this node can be, so every subscriber sees a settled `last`.
        parentSubscription = parent.subscribe(Observer(
            next: { root in follower.receive(root) },
            end: { termination in follower.finish(termination) },
            inPlace: InPlaceReader(
                prepare: { address in follower.prepare(address) },
                flush: { follower.flush() }
            )
        ))
    }

    deinit {
        parentSubscription.cancel()
        parent.scopes.removeReleased(follower.keyPath)
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: follower.keyPath] }

    @usableFromInline
    var cacheKey: AnyKeyPath { follower.keyPath }

    @usableFromInline
    var host: any DeliveryHost { follower.host }

    /// A cell of the root's graph that reads the same key path: what a map or combination of this scope
    /// derives from, so that it updates in the root's epoch, never between the scope's own deliveries.
    @usableFromInline
    var derivation: DerivedCell<Value> { derivation(deduplicating: follower.keyPath, of: parent) }

    /// Registers `observer`; the subscription keeps the node (and so its parent link) alive.
    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let subscription = follower.subscribe(observer)
        return Subscription { [self] in
            _ = self
            subscription.cancel()
        }
    }
}

/// The delivery half of a ``ScopeStorage``: the last slice and the observers of the scope.
///
/// It has no queue and no lock. Everything it does runs on its root's deliverer (its ``host``): the
/// parent's deliveries reach ``receive(_:)`` there, and ``subscribe(_:)`` and cancelling are run there
/// in turn. So a change reaches the scope's observers as part of the root's delivery, in the root's
/// order, with no atomic operation of its own.
///
/// `@unchecked Sendable`: its mutable fields belong to its root's deliverer (checked in debug builds).
@usableFromInline final class ScopeFollower<Root, Value: Equatable>: @unchecked Sendable {
    @usableFromInline let keyPath: KeyPath<Root, Value>
    /// Where the slice lives inside a `Root` value when the key path names stored properties of structs
    /// only; `nil` otherwise. Reading at an offset skips the key path's interpretation, which asks the
    /// runtime for generic metadata on every read.
    @usableFromInline let offset: Int?
    /// The root's deliverer, which runs everything below.
    @usableFromInline let host: any DeliveryHost
    /// The last slice passed on, which a new subscriber receives first. Host only.
    @usableFromInline @exclusivity(unchecked) var last: Value
    /// The scope's observers. Host only.
    @usableFromInline @exclusivity(unchecked) var observers = ObserverBag<Value>()
    /// How the parent ended, once it has. Host only.
    @usableFromInline @exclusivity(unchecked) var stop: Termination?
    /// A changed slice read by ``prepare(_:)`` and not yet delivered. Host only. (If the scope's
    /// parent subscription is cancelled between the two steps, it stays until the next change; that
    /// happens only as the node is freed.)
    @usableFromInline @exclusivity(unchecked) var pending: Value?
    /// The slice ``prepare(_:)`` replaced, kept until ``flush()`` so that it is released after the store's
    /// lock, never under it (its release could run code that reads the store). Host only.
    @usableFromInline @exclusivity(unchecked) var retired: Value?

    @inlinable
    init(keyPath: KeyPath<Root, Value>, initial: Value, host: any DeliveryHost) {
        self.keyPath = keyPath
        self.offset = MemoryLayout<Root>.offset(of: keyPath)
        self.last = initial
        self.host = host
    }

    /// The slice of `root`: `root[keyPath: keyPath]`, read directly at ``offset`` when there is one.
    @inlinable
    func slice(of root: Root) -> Value {
        guard let offset else { return root[keyPath: keyPath] }
        let slice = withUnsafeBytes(of: root) { bytes in
            bytes.baseAddress.unsafelyUnwrapped.advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
        }
        assert(slice == root[keyPath: keyPath], "scope: the read at offset \(offset) disagrees with \(keyPath)")
        return slice
    }

    /// Passes the slice of `root` on when it differs from the last one. Host only, though unchecked: a
    /// constant parent delivers its one value on the thread that made the scope, before anything else can
    /// reach the follower.
    @inlinable
    func receive(_ root: Root) {
        let slice = slice(of: root)
        guard slice != last else { return }
        last = slice
        guard stop == nil else { return }
        observers.members.deliver(slice)
    }

    /// Reads the slice of the root value at `address` (a store's state, under its lock) and keeps it for
    /// ``flush()`` when it differs from the last one. Host only.
    @inlinable
    func prepare(_ address: UnsafeRawPointer) {
        checkHostOwned(host)
        let slice: Value
        if let offset {
            slice = address.load(fromByteOffset: offset, as: Value.self)
            assert(
                slice == address.assumingMemoryBound(to: Root.self).pointee[keyPath: keyPath],
                "scope: the read at offset \(offset) disagrees with \(keyPath)"
            )
        } else {
            slice = address.assumingMemoryBound(to: Root.self).pointee[keyPath: keyPath]
        }
        guard slice != last else { return }
        retired = last
        last = slice
        pending = slice
    }

    /// Delivers the slice ``prepare(_:)`` kept, if any. Host only.
    @inlinable
    func flush() {
        checkHostOwned(host)
        retired = nil
        guard let slice = pending else { return }
        pending = nil
        guard stop == nil else { return }
        observers.members.deliver(slice)
    }

    /// Passes the parent's end on to the scope's observers. Host only.
    @inlinable
    func finish(_ termination: Termination) {
        guard stop == nil else { return }
        stop = termination
        observers.end(termination)
    }

    /// Registers `observer`: on the host, in turn, it receives the last slice, then every change.
    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let box = ObserverBox(observer: observer, source: self) { box in
            unsafeDowncast(box.source, to: ScopeFollower.self).remove(box)
        }
        host.run { [self] in add(box) }
        return Subscription(box)
    }

    /// Host only: hands `box` the last slice (or, after the end, only the end) and adds it.
    @inlinable
    func add(_ box: ObserverBox<Value>) {
        checkHostOwned(host)
        observers.add(box, replay: stop == nil ? [last] : [], stop: stop)
    }

    /// Called by an ``ObserverBox`` when its subscription is cancelled.
    @inlinable
    func remove(_ box: ObserverBox<Value>) {
        host.run { [self] in
            checkHostOwned(host)
            observers.remove(box)
        }
    }
}

/// A node kept in a ``ScopeCache``: a scope's storage, a root's derivation graph, a scope's derived cell.
@usableFromInline
protocol ScopeCacheNode: AnyObject, Sendable {
    /// The key path the node is kept under.
    var cacheKey: AnyKeyPath { get }
}

/// A property's scope nodes by key path, held weakly so unused nodes are freed.
///
/// The lock keeps only `Sendable` things: weak references to the nodes, by their key path's hash (a
/// key path is not `Sendable`: it may hold subscript arguments that are not). A node says its own key
/// path, which is compared with the one asked for; two key paths with one hash share a bucket.
@usableFromInline
final class ScopeCache: Sendable {
    @usableFromInline
    struct WeakNode: Sendable {
        @usableFromInline weak var node: (any ScopeCacheNode)?
    }

    @usableFromInline let nodes = Lock<[Int: [WeakNode]]>([:])

    @inlinable init() {}

    /// The live node for `keyPath`, or a new one from `make`. The node is made outside the lock (making it
    /// subscribes to the parent, which may deliver); if two threads race, the first stored node wins.
    @usableFromInline
    func node<Node: ScopeCacheNode>(for keyPath: AnyKeyPath, make: () -> Node) -> Node {
        let hash = keyPath.hashValue
        // Loading a weak reference makes a strong one: each is returned, and released outside the lock,
        // so a node whose last reference goes at that moment is freed (and re-enters this cache) unlocked.
        let (found, _) = nodes.withLock { Self.live(for: keyPath, in: &$0[hash]) }
        if let existing = found as? Node { return existing }
        let made = make()
        let (stored, loaded) = nodes.withLock { nodes -> ((any ScopeCacheNode)?, [any ScopeCacheNode]) in
            let (existing, loaded) = Self.live(for: keyPath, in: &nodes[hash])
            if existing == nil { nodes[hash, default: []].append(WeakNode(node: made)) }
            return (existing, loaded)
        }
        _ = loaded
        return stored as? Node ?? made
    }

    /// The live node kept for `keyPath` in `bucket`, and every node loaded to find it (to be released
    /// after the lock). Drops the entries of freed nodes, and the bucket once it is empty. Under `nodes`.
    @usableFromInline
    static func live(
        for keyPath: AnyKeyPath, in bucket: inout [WeakNode]?
    ) -> (found: (any ScopeCacheNode)?, loaded: [any ScopeCacheNode]) {
        guard var entries = bucket else { return (nil, []) }
        var loaded: [any ScopeCacheNode] = []
        var found: (any ScopeCacheNode)?
        entries.removeAll { entry in
            guard let node = entry.node else { return true }
            loaded.append(node)
            if found == nil, node.cacheKey == keyPath { found = node }
            return false
        }
        bucket = entries.isEmpty ? nil : entries
        return (found, loaded)
    }

    /// Forgets `keyPath` if its node has been freed.
    @usableFromInline
    func removeReleased(_ keyPath: AnyKeyPath) {
        let loaded = nodes.withLock { Self.live(for: keyPath, in: &$0[keyPath.hashValue]).loaded }
        _ = loaded
    }

    /// How many live scope nodes the cache holds (for tests).
    @usableFromInline
    var liveCount: Int {
        // The strong references are released outside the lock; see `removeReleased(_:)`.
        let loaded = nodes.withLock { $0.values.flatMap { $0.map(\.node) } }
        return loaded.count { $0 != nil }
    }
}
