/// Derived properties (`map`, `select`, `combine`, `combineLatest`) and how they stay glitch-free.
///
/// Every property has a *root*: the `MutableProperty`, `Store` state or constant that all its values come
/// from (a scope, a binding, or a map of a property has the same root as that property). The derived
/// properties of one root form one graph, ``DerivationGraph``, and each derived property is one
/// ``DerivedCell`` in it.
///
/// A graph observes its root once, and only while some cell of it has observers. On each new root value
/// it starts a new *epoch* and visits its observed cells in rank order (sources before what derives from
/// them). A visited cell asks its sources for their values at this epoch; each source computes at most
/// once per epoch (the result is remembered with the epoch), from the new root value only, and says
/// whether its value changed. A cell whose sources did not change keeps its value without calling the
/// user's closure; a cell whose value did not change (for `Equatable` values) tells nobody. So one root
/// change makes every derived property compute at most once and emit at most once, from the new state
/// only: a diamond A → B, A → C, (B, C) → D never shows D a new B with an old C.
///
/// Everything a cell keeps (its value, its epochs, its observers) belongs to the root's deliverer, like
/// a scope's; subscribing, cancelling and delivering run there in turn, so cells need no lock.

/// The part of a root's graph that does not depend on the root's type: its deliverer, the epoch, the
/// observed cells in rank order, and the subscription to the root.
// @unchecked: every `var` belongs to the root's deliverer (`host`), which alone reads and writes it.
@usableFromInline final class DerivationGraphCore: @unchecked Sendable {

    /// One observed cell: a reference the list holds, its rank, and the specialised step that updates
    /// it and tells its observers.
    @usableFromInline
    struct ActiveCell {
        @usableFromInline let cell: Unmanaged<AnyObject>
        @usableFromInline let rank: Int
        @usableFromInline let pass: (UnsafeRawPointer, UnsafeRawPointer, UInt64) -> Void
        /// The cell's ``RootPass``, for a cell that reads the root value itself; kept by the cell, so
        /// unretained here (the walk over the list then retains nothing).
        @usableFromInline let rootPass: Unmanaged<AnyObject>?
    }

    /// The root's deliverer, which runs everything a cell of this graph does.
    @usableFromInline let host: any DeliveryHost
    /// The number of the root value being delivered, or last delivered. Host only.
    @usableFromInline @exclusivity(unchecked) var epoch: UInt64 = 0
    /// The observed cells, by rank, each retained once. Host only.
    @usableFromInline @exclusivity(unchecked) var active: ContiguousArray<ActiveCell> = []
    /// How the root ended, once it has. Host only.
    @usableFromInline @exclusivity(unchecked) var stop: Termination?
    /// Cells waiting for their activation's root value. Host only. The graph keeps observing its root
    /// while any wait, even when no cell is active.
    @usableFromInline @exclusivity(unchecked) var activating = 0
    /// The subscription to the root, while some cell is observed or waits. Host only.
    @usableFromInline @exclusivity(unchecked) var rootSubscription: Subscription?
    /// Counts the root subscriptions, so that a delivery still queued for a cancelled one is ignored.
    /// Host only.
    @usableFromInline @exclusivity(unchecked) var generation: UInt64 = 0

    @usableFromInline
    init(host: any DeliveryHost) {
        self.host = host
    }

    deinit {
        for entry in active { entry.cell.release() }
    }

    /// Adds an observed cell after the cells of lower or equal rank. Host only.
    @usableFromInline
    func insert(_ entry: ActiveCell) {
        checkHostOwned(host)
        var index = active.count
        while index > 0, active[index - 1].rank > entry.rank { index -= 1 }
        active.insert(entry, at: index)
    }

    /// Whether nothing needs the root any more: no cell is observed or waits. Host only.
    @usableFromInline
    var isIdle: Bool { active.isEmpty && activating == 0 }

    /// Stops observing the root. Host only.
    @usableFromInline
    func stopObservingRoot() {
        generation &+= 1
        let subscription = rootSubscription
        rootSubscription = nil
        subscription?.cancel()
    }

    /// Removes an observed cell, and stops observing the root when it was the last. Host only.
    ///
    /// - Complexity: O(n) in the number of observed cells of the graph.
    @usableFromInline
    func remove(_ cell: AnyObject) {
        checkHostOwned(host)
        guard let index = active.firstIndex(where: { $0.cell.toOpaque() == Unmanaged.passUnretained(cell).toOpaque() })
        else { return }
        let entry = active.remove(at: index)
        if isIdle { stopObservingRoot() }
        entry.cell.release()
    }
}

/// What a cell needs of its graph without knowing the root's type: the shared part (``core``), the
/// root's current value, and a way to start observing the root. ``DerivationGraph`` is the one graph.
@usableFromInline
protocol DerivationGraphing: AnyObject, Sendable {
    /// The part of the graph that does not depend on the root's type.
    var core: DerivationGraphCore { get }

    /// Calls `body` with the address of the root's current value (read once, from any thread).
    func withCurrentRoot(_ body: (UnsafeRawPointer) -> Void)

    /// Starts observing the root if the graph does not yet, then hands `activate` the root value at
    /// this point of the root's order: the value the root's next delivery follows. Host only.
    ///
    /// The value comes from a subscription of its own, whose first delivery (the root's current value
    /// when it was queued, or a store's state when it runs) arrives in the root's order after the
    /// graph's own subscription; it is cancelled at once. So the graph never keeps a root value between
    /// deliveries (which would make the root's next in-place write copy it).
    func activate(_ activate: @escaping (UnsafeRawPointer) -> Void)
}

/// The graph of one root: it observes the root while any of its cells is observed.
@usableFromInline
final class DerivationGraph<Root>: DerivationGraphing, ScopeCacheNode {
    /// The root storage. The graph keeps it; the root keeps the graph only weakly (in its scope cache).
    @usableFromInline let root: any PropertyStorage<Root>
    @usableFromInline let core: DerivationGraphCore

    @usableFromInline
    init(root: any PropertyStorage<Root>) {
        self.root = root
        core = DerivationGraphCore(host: root.host)
    }

    @usableFromInline
    func withCurrentRoot(_ body: (UnsafeRawPointer) -> Void) {
        let value = root.value
        withUnsafePointer(to: value) { body(UnsafeRawPointer($0)) }
    }

    @usableFromInline
    func activate(_ activate: @escaping (UnsafeRawPointer) -> Void) {
        let core = core
        if core.rootSubscription == nil {
            core.generation &+= 1
            let generation = core.generation
            core.rootSubscription = root.subscribe(Observer(
                next: { [self] value in receive(value, generation: generation) },
                end: { [self] termination in finish(termination, generation: generation) }
            ))
        }
        core.activating += 1
        let once = DelivererBox<Subscription?>(nil)
        let done = DelivererBox(false)
        let subscription = root.subscribe(Observer(
            next: { value in
                guard !done.value else { return }
                done.value = true
                core.activating -= 1
                withUnsafePointer(to: value) { activate(UnsafeRawPointer($0)) }
                once.value?.cancel()
                if core.isIdle { core.stopObservingRoot() }
            },
            end: { _ in }
        ))
        if done.value { subscription.cancel() } else { once.value = subscription }
    }

    /// A new root value: one epoch over the observed cells. Host only.
    @usableFromInline
    func receive(_ value: Root, generation: UInt64) {
        let core = core
        guard generation == core.generation else { return }
        checkHostOwned(core.host)
        core.epoch &+= 1
        let epoch = core.epoch
        withUnsafePointer(to: value) { pointer in
            let root = UnsafeRawPointer(pointer)
            // Subscribes and cancels made by observers during the pass are queued on the host, so the
            // list does not change while it is walked.
            core.active.withUnsafeBufferPointer { cells in
                for entry in cells {
                    let cell = UnsafeRawPointer(entry.cell.toOpaque())
                    if let rootPass = entry.rootPass {
                        // A cell of the root's value is handed `value` itself, borrowed: reading it
                        // through `root` would copy it (retaining what it holds) for every such cell.
                        rootPass._withUnsafeGuaranteedRef {
                            unsafeDowncast($0, to: RootPass<Root>.self).pass(cell, value, epoch)
                        }
                    } else {
                        entry.pass(cell, root, epoch)
                    }
                }
            }
        }
    }

    /// The root ended: every observed cell's observers are told. Host only.
    @usableFromInline
    func finish(_ termination: Termination, generation: UInt64) {
        let core = core
        guard generation == core.generation, core.stop == nil else { return }
        core.stop = termination
        for entry in core.active {
            unsafeBitCast(entry.cell.takeUnretainedValue(), to: AnyCellEnd.self).endObservers(termination)
        }
    }
}

/// The step of a cell that reads the root value itself (a map or select of the root), typed by the
/// root: the graph hands it the root value it received, borrowed, where the untyped step would read a copy
/// of it through an address. It takes the cell's address, so it keeps no reference to the cell.
@usableFromInline
final class RootPass<Root> {
    @usableFromInline let pass: (UnsafeRawPointer, Root, UInt64) -> Void

    @inlinable
    init(_ pass: @escaping (UnsafeRawPointer, Root, UInt64) -> Void) {
        self.pass = pass
    }
}

/// A cell's way of ending its observers without its value type.
@usableFromInline
protocol AnyCellEnd: AnyObject {
    func endObservers(_ termination: Termination)
}

/// One derived property in its root's graph: its value at the last epoch it was asked for, and its
/// observers.
///
/// All of a cell's work is in closures made where the cell is made (in the caller's module, for the
/// caller's types), so it runs specialised; the graph reaches them through ``pass``, which captures
/// nothing. A cell keeps its sources (through ``recompute``) and its graph; nothing keeps a cell but the
/// properties and subscriptions that use it, and the graph while it is observed.
///
/// `@unchecked Sendable`: the mutable fields belong to the root's deliverer; ``value`` reads the root
/// afresh from any thread and touches none of them.
@usableFromInline final class DerivedCell<Value>: PropertyStorage, AnyCellEnd, ScopeCacheNode, @unchecked Sendable {
    @usableFromInline let graph: any DerivationGraphing
    /// 0 for a root cell; one more than the highest rank of its sources otherwise.
    @usableFromInline let rank: Int
    /// Computes the value for the root value at the address, at the epoch, when a source changed since
    /// the cell last computed; stores it in ``latest`` and returns whether it changed.
    @usableFromInline let recompute: (UnsafeRawPointer, UInt64, DerivedCell) -> Bool
    /// Computes the value afresh from a root value (for ``value``), with no memory of epochs.
    @usableFromInline let compute: (UnsafeRawPointer) -> Value
    /// ``pass(_:_:)`` of a cell given by address: made in the initialiser, so it is specialised where the
    /// cell is made. It captures nothing.
    @usableFromInline let passThunk: (UnsafeRawPointer, UnsafeRawPointer, UInt64) -> Void
    /// The ``RootPass`` of a cell that reads the root value itself, `nil` for the others.
    @usableFromInline let rootPass: AnyObject?
    @usableFromInline let scopes = ScopeCache()

    /// The epoch this cell was last asked about. Host only.
    @usableFromInline @exclusivity(unchecked) var evaluatedAt: UInt64 = 0
    /// The epoch at which ``latest`` last changed. Host only.
    @usableFromInline @exclusivity(unchecked) var changedAt: UInt64 = 0
    /// The epoch at which ``latest`` was last computed (0: never). Host only.
    @usableFromInline @exclusivity(unchecked) var computedAt: UInt64 = 0
    /// The value at ``computedAt``. Host only.
    @usableFromInline @exclusivity(unchecked) var latest: Value?
    /// The cell's observers. Host only.
    @usableFromInline @exclusivity(unchecked) var observers = ObserverBag<Value>()
    /// Whether the cell is in its graph's list of observed cells. Host only.
    @usableFromInline @exclusivity(unchecked) var isActive = false
    /// Observers waiting for the cell to become active. Host only.
    @usableFromInline @exclusivity(unchecked) var waiting: [ObserverBox<Value>] = []
    /// How the cell's observers were ended, once they were. Host only.
    @usableFromInline @exclusivity(unchecked) var stop: Termination?

    @inlinable
    init(
        graph: any DerivationGraphing, rank: Int,
        recompute: @escaping (UnsafeRawPointer, UInt64, DerivedCell) -> Bool,
        compute: @escaping (UnsafeRawPointer) -> Value,
        rootPass: AnyObject? = nil
    ) {
        self.graph = graph
        self.rank = rank
        self.recompute = recompute
        self.compute = compute
        self.rootPass = rootPass
        self.passThunk = { cell, root, epoch in
            Unmanaged<DerivedCell>.fromOpaque(cell)._withUnsafeGuaranteedRef { $0.pass(root, epoch) }
        }
    }

    /// The value at `epoch` for the root value at `root`, computed at most once per epoch; returns
    /// whether it changed at this epoch. Host only.
    @inlinable @inline(__always)
    func update(_ root: UnsafeRawPointer, _ epoch: UInt64) -> Bool {
        update(epoch) { recompute(root, epoch, self) }
    }

    /// ``update(_:_:)`` with the computation given: `recompute` runs only when the cell was not yet
    /// asked at `epoch`. Host only.
    @inlinable @inline(__always)
    func update(_ epoch: UInt64, recomputing recompute: () -> Bool) -> Bool {
        if evaluatedAt == epoch { return changedAt == epoch }
        evaluatedAt = epoch
        guard recompute() else { return false }
        changedAt = epoch
        return true
    }

    /// Stores `value` as computed at `epoch`; returns `false` when `Test` says it is the same as the
    /// value before. Host only.
    @inlinable @inline(__always)
    func store<Test: ChangeTest<Value>>(_ value: Value, at epoch: UInt64, _ test: Test.Type) -> Bool {
        let isFirst = computedAt == 0
        computedAt = epoch
        if !isFirst, Test.same(latest.unsafelyUnwrapped, value) { return false }
        latest = value
        return true
    }

    // MARK: PropertyStorage

    /// Computed afresh from the root's current value, read once: every source is seen at the same state.
    @usableFromInline
    var value: Value {
        var result: Value?
        graph.withCurrentRoot { result = compute($0) }
        return result.unsafelyUnwrapped
    }

    @usableFromInline
    var host: any DeliveryHost { graph.core.host }

    @usableFromInline
    var derivation: DerivedCell<Value> { self }

    @usableFromInline
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        let box = ObserverBox(observer: observer, source: self) { box in
            unsafeDowncast(box.source, to: DerivedCell.self).remove(box)
        }
        graph.core.host.run { [self] in add(box) }
        return Subscription(box)
    }

    /// Host only: hands `box` the cell's value, then adds it. A cell nobody observed first becomes
    /// active (its graph then observes the root), at a point of the root's order where it can compute its
    /// value from the root; observers arriving meanwhile wait for that.
    @usableFromInline
    func add(_ box: ObserverBox<Value>) {
        checkHostOwned(graph.core.host)
        if isActive || graph.core.stop != nil || stop != nil {
            addNow(box)
            return
        }
        waiting.append(box)
        guard waiting.count == 1 else { return }
        graph.activate { [self] root in
            isActive = true
            graph.core.insert(.init(
                cell: Unmanaged.passRetained(self), rank: rank, pass: passThunk,
                rootPass: rootPass.map { Unmanaged.passUnretained($0) }))
            _ = update(root, graph.core.epoch)
            let boxes = waiting
            waiting = []
            for box in boxes { addNow(box) }
            if observers.isEmpty {
                // Every waiting observer left before the cell became active.
                isActive = false
                graph.core.remove(self)
            }
        }
    }

    /// Host only: hands `box` the value (or, after the end, only the end) and adds it.
    @usableFromInline
    func addNow(_ box: ObserverBox<Value>) {
        checkHostOwned(graph.core.host)
        if latest == nil {
            // The root ended before this cell was ever observed: its last value is read afresh.
            latest = value
        }
        observers.add(box, replay: CollectionOfOne(latest.unsafelyUnwrapped), stop: stop ?? graph.core.stop)
    }

    /// One epoch's step: update, and tell the observers when the value changed. Host only.
    @inlinable
    func pass(_ root: UnsafeRawPointer, _ epoch: UInt64) {
        pass(epoch) { recompute(root, epoch, self) }
    }

    /// ``pass(_:_:)`` with the computation given. Host only.
    @inlinable @inline(__always)
    func pass(_ epoch: UInt64, recomputing recompute: () -> Bool) {
        guard update(epoch, recomputing: recompute), stop == nil else { return }
        observers.members.deliver(latest.unsafelyUnwrapped)
    }

    /// Called by an ``ObserverBox`` when its subscription is cancelled.
    @usableFromInline
    func remove(_ box: ObserverBox<Value>) {
        graph.core.host.run { [self] in
            checkHostOwned(graph.core.host)
            observers.remove(box)
            guard observers.isEmpty, isActive else { return }
            isActive = false
            graph.core.remove(self)
        }
    }

    @usableFromInline
    func endObservers(_ termination: Termination) {
        guard stop == nil else { return }
        stop = termination
        observers.end(termination)
    }
}

// MARK: - Making cells

extension DerivedCell {
    /// A cell of the root's own value in `graph`.
    @usableFromInline
    static func root(in graph: DerivationGraph<Value>) -> DerivedCell {
        DerivedCell(
            graph: graph, rank: 0,
            recompute: { root, epoch, cell in
                cell.store(root.assumingMemoryBound(to: Value.self).pointee, at: epoch, EveryValue.self)
            },
            compute: { $0.assumingMemoryBound(to: Value.self).pointee }
        )
    }

    /// Whether this is its graph's root cell, whose value is the root value itself.
    @inlinable
    var isRoot: Bool { rank == 0 }

    /// A cell whose value is `transform` of this cell's. It counts as changed when this cell changed and
    /// `Test` says the new result is not the same as the last.
    @inlinable
    func mapped<T, Test: ChangeTest<T>>(_ transform: @escaping (Value) -> T, by test: Test.Type) -> DerivedCell<T> {
        if isRoot {
            return DerivedCell<T>(
                graph: graph, rank: 1,
                recompute: { root, epoch, cell in
                    cell.store(transform(root.assumingMemoryBound(to: Value.self).pointee), at: epoch, test)
                },
                compute: { transform($0.assumingMemoryBound(to: Value.self).pointee) },
                rootPass: RootPass<Value> { cell, root, epoch in
                    Unmanaged<DerivedCell<T>>.fromOpaque(cell)._withUnsafeGuaranteedRef { cell in
                        cell.pass(epoch) { cell.store(transform(root), at: epoch, test) }
                    }
                }
            )
        }
        return DerivedCell<T>(
            graph: graph, rank: rank + 1,
            recompute: { [self] root, epoch, cell in
                _ = update(root, epoch)
                guard changedAt > cell.computedAt else { return false }
                return cell.store(transform(latest.unsafelyUnwrapped), at: epoch, test)
            },
            compute: { [compute] in transform(compute($0)) }
        )
    }

    /// A cell whose value is `transform` of this cell's, told to observers on every change of this one.
    @inlinable
    func mapped<T>(_ transform: @escaping (Value) -> T) -> DerivedCell<T> {
        mapped(transform, by: EveryValue.self)
    }

    /// A cell whose value is `transform` of this cell's, told to observers only when it changed.
    @inlinable
    func mapped<T: Equatable>(deduplicating transform: @escaping (Value) -> T) -> DerivedCell<T> {
        mapped(transform, by: EqualValues.self)
    }
}

/// How a cell decides whether a new value is a change: by type, so the test is inlined where the cell
/// is made rather than called through a closure.
@usableFromInline
protocol ChangeTest<Value> {
    associatedtype Value
    /// Whether `new` is the same as `old`, so observers need not be told.
    static func same(_ old: Value, _ new: Value) -> Bool
}

/// Every new value is a change (results that are not `Equatable`).
@usableFromInline
enum EveryValue<Value>: ChangeTest {
    @inlinable static func same(_ old: Value, _ new: Value) -> Bool { false }
}

/// A new value is a change when it differs by `==` (deduplicated results).
@usableFromInline
enum EqualValues<Value: Equatable>: ChangeTest {
    @inlinable static func same(_ old: Value, _ new: Value) -> Bool { old == new }
}

/// Whether every cell of `cells` is in one graph.
@inlinable
func shareOneGraph<each V>(_ cells: repeat DerivedCell<each V>) -> (any DerivationGraphing)? {
    var graph: (any DerivationGraphing)?
    var shared = true
    for cell in repeat each cells {
        if let known = graph {
            if known !== cell.graph { shared = false }
        } else {
            graph = cell.graph
        }
    }
    return shared ? graph : nil
}

/// The highest rank among `cells`.
@inlinable
func highestRank<each V>(_ cells: repeat DerivedCell<each V>) -> Int {
    var rank = 0
    for cell in repeat each cells { rank = Swift.max(rank, cell.rank) }
    return rank
}

/// Brings every cell of `cells` up to `epoch` and returns whether any changed since `since`.
@inlinable @inline(__always)
func updateAll<each V>(_ cells: repeat DerivedCell<each V>, root: UnsafeRawPointer, epoch: UInt64, since: UInt64) -> Bool {
    var changed = false
    for cell in repeat each cells {
        _ = cell.update(root, epoch)
        if cell.changedAt > since { changed = true }
    }
    return changed
}

/// A cell in `graph` whose value is `transform` of the values of `cells` (all of that graph), told to
/// observers when a cell changed and `Test` says the result is not the same as the last.
@inlinable
func combinedCell<each V, T, Test: ChangeTest<T>>(
    _ cells: repeat DerivedCell<each V>, graph: any DerivationGraphing,
    transform: @escaping (repeat each V) -> T, by test: Test.Type
) -> DerivedCell<T> {
    let sources = (repeat each cells)
    return DerivedCell<T>(
        graph: graph, rank: highestRank(repeat each cells) + 1,
        recompute: { root, epoch, cell in
            guard updateAll(repeat each sources, root: root, epoch: epoch, since: cell.computedAt) else { return false }
            return cell.store(transform(repeat (each sources).latest.unsafelyUnwrapped), at: epoch, test)
        },
        compute: { root in transform(repeat (each sources).compute(root)) }
    )
}

/// ``combinedCell(_:graph:transform:by:)`` for two cells, written out: the optimiser specialises it for
/// the caller's types, which it does not do for a closure over a parameter pack.
@inlinable
func combinedCell<A, B, T, Test: ChangeTest<T>>(
    _ a: DerivedCell<A>, _ b: DerivedCell<B>, graph: any DerivationGraphing,
    transform: @escaping (A, B) -> T, by test: Test.Type
) -> DerivedCell<T> {
    DerivedCell<T>(
        graph: graph, rank: Swift.max(a.rank, b.rank) + 1,
        recompute: { root, epoch, cell in
            _ = a.update(root, epoch)
            _ = b.update(root, epoch)
            guard a.changedAt > cell.computedAt || b.changedAt > cell.computedAt else { return false }
            return cell.store(transform(a.latest.unsafelyUnwrapped, b.latest.unsafelyUnwrapped), at: epoch, test)
        },
        compute: { root in transform(a.compute(root), b.compute(root)) }
    )
}

extension DerivationGraph {
    /// A root's graph is kept in the root's scope cache under ``DerivationGraphKey``.
    @usableFromInline var cacheKey: AnyKeyPath { DerivationGraphKey.keyPath }
}

extension DerivedCell {
    /// A scope's cell is kept in the scope's own cache under ``DerivationGraphKey``.
    @usableFromInline var cacheKey: AnyKeyPath { DerivationGraphKey.keyPath }
}
