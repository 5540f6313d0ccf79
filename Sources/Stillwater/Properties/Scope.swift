/// The shared node behind `scope(\.path)`: one per key path per property, however many observers.
///
/// The node observes its parent once, through its ``ScopeEngine``. On each parent change the engine reads
/// its slice once and compares it once with the last slice; only a changed slice reaches the node's own
/// observers. The parent keeps the node weakly (in its ``ScopeCache``), so a node lives while a `Property`
/// or a subscription uses it, and is freed, with its subscription to the parent, when the last one goes.
///
/// The parent's subscription holds the engine strongly and never the node, so delivery loads no weak
/// reference and the engine needs no side table for its reference counts: weak references cost a
/// slow-path retain and release on every delivery.
@usableFromInline
final class ScopeNode<Root, Value: Equatable>: PropertyStorage, @unchecked Sendable {
    @usableFromInline let parent: any PropertyStorage<Root>
    @usableFromInline let engine: ScopeEngine<Root, Value>
    @usableFromInline let scopes = ScopeCache()
    @usableFromInline let parentSubscription: Subscription

    /// The node of `keyPath` on `parent`, shared: made on first use, then handed back while it lives.
    ///
    /// Callers pass the parent as an existential on purpose: with `Root` and `Value` known, the node's
    /// delivery path specialises in the caller's module (a generic `Self` would keep it unspecialised,
    /// paying a generic-metadata lookup per delivery).
    @inlinable
    static func shared(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) -> ScopeNode {
        parent.scopes.node(for: keyPath) { ScopeNode(parent: parent, keyPath: keyPath) }
    }

    @inlinable
    init(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) {
        self.parent = parent
        let engine = ScopeEngine(keyPath: keyPath, initial: parent.value[keyPath: keyPath])
        self.engine = engine
        // The parent's first delivery is its current value; if it moved since `initial` was read, the
        // engine's comparison passes it on, otherwise it is dropped as unchanged.
        parentSubscription = parent.subscribe(Observer(
            next: { root in engine.receive(root) },
            end: { termination in engine.finish(termination) }
        ))
    }

    deinit {
        parentSubscription.cancel()
        parent.scopes.removeReleased(engine.keyPath)
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: engine.keyPath] }

    /// Registers `observer`; the subscription keeps the node (and so its parent link) alive.
    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let subscription = engine.core.subscribe(observer)
        return Subscription { [self] in
            _ = self
            subscription.cancel()
        }
    }
}

/// The delivery half of a ``ScopeNode``: the last slice and the observers of the scope.
@usableFromInline
final class ScopeEngine<Root, Value: Equatable>: @unchecked Sendable {
    @usableFromInline let keyPath: KeyPath<Root, Value>
    /// Where the slice lives inside a `Root` value when the key path names stored properties of structs
    /// only; `nil` otherwise. Reading at an offset skips the key path's interpretation, which asks the
    /// runtime for generic metadata on every read.
    @usableFromInline let offset: Int?
    @usableFromInline let core: SourceCore<Value>
    /// The last slice passed on. Touched only by the parent's deliveries, which are serialised.
    @usableFromInline @exclusivity(unchecked) var last: Value

    @inlinable
    init(keyPath: KeyPath<Root, Value>, initial: Value) {
        self.keyPath = keyPath
        self.offset = MemoryLayout<Root>.offset(of: keyPath)
        self.last = initial
        self.core = SourceCore(replayLimit: 1, initial: [initial])
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

    /// Passes the slice of `root` on when it differs from the last one.
    @inlinable
    func receive(_ root: Root) {
        let slice = slice(of: root)
        guard slice != last else { return }
        last = slice
        core.send(.next(slice))
    }

    /// Passes the parent's end on to the scope's observers.
    @inlinable
    func finish(_ termination: Termination) {
        core.send(termination.event())
    }
}

/// A property's scope nodes by key path, held weakly so unused nodes are freed.
@usableFromInline
final class ScopeCache: @unchecked Sendable {
    @usableFromInline
    struct WeakNode {
        @usableFromInline weak var node: AnyObject?
    }

    @usableFromInline let nodes = Lock<[AnyKeyPath: WeakNode]>([:])

    @inlinable init() {}

    /// The live node for `keyPath`, or a new one from `make`. The node is made outside the lock (making it
    /// subscribes to the parent, which may deliver); if two threads race, the first stored node wins.
    @usableFromInline
    func node<Node: AnyObject>(for keyPath: AnyKeyPath, make: () -> Node) -> Node {
        if let existing = nodes.withLock({ $0[keyPath]?.node }) as? Node { return existing }
        let made = make()
        return nodes.withLock { nodes -> Node in
            if let existing = nodes[keyPath]?.node as? Node { return existing }
            nodes[keyPath] = WeakNode(node: made)
            return made
        }
    }

    /// Forgets `keyPath` if its node has been freed.
    @usableFromInline
    func removeReleased(_ keyPath: AnyKeyPath) {
        // Loading a weak reference makes a strong one; it is returned and released outside the lock, so
        // a node whose last reference goes at that moment is freed (and re-enters this cache) unlocked.
        let loaded: AnyObject? = nodes.withLock { nodes in
            guard let entry = nodes[keyPath] else { return nil }
            let node = entry.node
            if node == nil { nodes[keyPath] = nil }
            return node
        }
        _ = loaded
    }

    /// How many live scope nodes the cache holds (for tests).
    @usableFromInline
    var liveCount: Int {
        // The strong references are released outside the lock; see `removeReleased(_:)`.
        let loaded = nodes.withLock { $0.values.map(\.node) }
        return loaded.count { $0 != nil }
    }
}
