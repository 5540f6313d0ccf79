/// The shared node behind `scope(\.path)`: one per key path per property, however many observers.
///
/// The node observes its parent once. On each parent change it reads its slice once and compares it once
/// with the last slice; only a changed slice reaches the node's own observers. The parent keeps the node
/// weakly (in its ``ScopeCache``), so a node lives while a `Property` or a subscription uses it, and is
/// freed, with its subscription to the parent, when the last one goes.
@usableFromInline
final class ScopeNode<Root, Value: Equatable>: PropertyStorage, @unchecked Sendable {
    @usableFromInline let parent: any PropertyStorage<Root>
    @usableFromInline let keyPath: KeyPath<Root, Value>
    @usableFromInline let core: SourceCore<Value>
    @usableFromInline let scopes = ScopeCache()
    /// The last slice passed on. Touched only by the parent's deliveries, which are serialised.
    @usableFromInline @exclusivity(unchecked) var last: Value
    @usableFromInline @exclusivity(unchecked) var parentSubscription: Subscription?

    @usableFromInline
    init(parent: any PropertyStorage<Root>, keyPath: KeyPath<Root, Value>) {
        self.parent = parent
        self.keyPath = keyPath
        let initial = parent.value[keyPath: keyPath]
        self.last = initial
        self.core = SourceCore(replayLimit: 1, initial: [initial])
        // The parent's first delivery is its current value; if it moved since `initial` was read, the
        // comparison below passes it on, otherwise it is dropped as unchanged.
        parentSubscription = parent.subscribe { [weak self] event in
            self?.receive(event)
        }
    }

    deinit {
        parentSubscription?.cancel()
        parent.scopes.removeReleased(keyPath)
    }

    @inlinable
    func receive(_ event: Event<Root>) {
        switch event {
        case .next(let root):
            let slice = root[keyPath: keyPath]
            guard slice != last else { return }
            last = slice
            core.send(.next(slice))
        case .error, .completed:
            core.send(event.map { $0[keyPath: keyPath] })
        }
    }

    @usableFromInline
    var value: Value { parent.value[keyPath: keyPath] }

    /// Registers `observer`; the subscription keeps the node (and so its parent link) alive.
    @usableFromInline
    func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        let subscription = core.subscribe(observer)
        return Subscription { [self] in
            _ = self
            subscription.cancel()
        }
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
        nodes.withLock { nodes in
            if let entry = nodes[keyPath], entry.node == nil { nodes[keyPath] = nil }
        }
    }

    /// How many live scope nodes the cache holds (for tests).
    @usableFromInline
    var liveCount: Int {
        nodes.withLock { $0.values.filter { $0.node != nil }.count }
    }
}
