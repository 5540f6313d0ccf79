import Stillwater

// The Stillwater side of the workloads that need more than a subject. W4 and W5 were written before
// their APIs existed, so each has two bodies: the real one, behind a compilation condition that
// Package.swift (`stillwaterParts`) turns on, and the stand-in used before, kept for comparison (turn
// the condition off to run it). The table names which form ran ("Stillwater (Store)", "Stillwater
// (BehaviorRelay + reducer)"). W6 and W7 have one body.

// MARK: - W4: a state holder with one deduplicated observer per slot

#if STILLWATER_PROPERTY
/// W4 through `MutableProperty`: writes in place with `modify`; observers use the workload's own pipeline,
/// `map { $0.items[i] }` then `distinctUntilChanged()`. (`scope(\.items[i])` gives the same deliveries,
/// but a subscript key path is interpreted on every read, which costs more than the closure here.)
final class StillwaterScoped {
    static let label = "MutableProperty + map"
    private let property: MutableProperty<ItemsState>

    init(_ initial: ItemsState) { property = MutableProperty(initial) }

    func observe(item index: Int, _ onNext: @escaping (Int) -> Void) -> Subscription {
        property.map { $0.items[index] }.distinctUntilChanged().observe(onNext)
    }

    func increment(item index: Int) { property.modify { $0.items[index] += 1 } }
}
#else
/// Stand-in until `MutableProperty` lands: a `BehaviorRelay`, observers use `map` + `distinctUntilChanged`,
/// and a write is read, change, `accept`.
final class StillwaterScoped {
    static let label = "BehaviorRelay + map"
    private let relay: BehaviorRelay<ItemsState>

    init(_ initial: ItemsState) { relay = BehaviorRelay(initial) }

    func observe(item index: Int, _ onNext: @escaping (Int) -> Void) -> Subscription {
        relay.map { $0.items[index] }.distinctUntilChanged().observe(onNext)
    }

    func increment(item index: Int) {
        var state = relay.value
        state.items[index] += 1
        relay.accept(state)
    }
}
#endif

// MARK: - W5, W5b: action dispatch with deduplicated observers

#if STILLWATER_STORE
extension Increment: Stillwater.Action {}

/// W5 through `Store`: `dispatch`, observers use `scope(\.path)`.
final class StillwaterStore {
    static let label = "Store"
    private let store: Store<StoreState>

    init(_ initial: StoreState) { store = Store(initial) }

    func dispatch(_ action: Increment) { store.dispatch(action) }
    var count: Int { store.state.value.count }

    func observeCount(_ onNext: @escaping (Int) -> Void) -> Subscription {
        store.scope(\.count).observe(onNext)
    }

    /// Each observer reads its own flag from every new state and compares it with the last one, the same
    /// work the peers and the hand-written store do. (`scope(\.flags[index])` gives the same deliveries
    /// with one shared node per flag, but a subscript key path is interpreted on every read, which costs
    /// more than the closure here.)
    func observeFlag(_ index: Int, _ onNext: @escaping (Bool) -> Void) -> Subscription {
        store.state.map { $0.flags[index] }.distinctUntilChanged().observe(onNext)
    }
}
#else
/// Stand-in until `Store` lands: a `BehaviorRelay` and the reducer, `accept(reduce(value, action))`,
/// the same shape OpenCombine runs with.
final class StillwaterStore {
    static let label = "BehaviorRelay + reducer"
    private let relay: BehaviorRelay<StoreState>

    init(_ initial: StoreState) { relay = BehaviorRelay(initial) }

    func dispatch(_ action: Increment) { relay.accept(reduce(relay.value, action)) }
    var count: Int { relay.value.count }

    func observeCount(_ onNext: @escaping (Int) -> Void) -> Subscription {
        relay.map { $0.count }.distinctUntilChanged().observe(onNext)
    }

    func observeFlag(_ index: Int, _ onNext: @escaping (Bool) -> Void) -> Subscription {
        relay.map { $0.flags[index] }.distinctUntilChanged().observe(onNext)
    }
}
#endif

// MARK: - W6: list diff

extension Item: Diffable {
    var diffIdentifier: Int { id }
}

enum StillwaterDiff {
    /// Times `Changeset(from:to:)` alone; the conversion to ``Patch`` is not timed.
    static func changeset(from old: [Item], to new: [Item], stopwatch: inout Stopwatch) -> Patch {
        let changeset = stopwatch.measure { Changeset(from: old, to: new) }
        return Patch(
            deletes: changeset.deletes, inserts: changeset.inserts,
            moves: changeset.moves.map { ($0.from, $0.to) }, updates: changeset.updates
        )
    }
}

// MARK: - W7: derived properties of a store

extension Bump: Stillwater.Action {}

/// W7 through `Store`: observer i observes `Property.combine` of `select { $0.items[i] }` and one
/// `select { $0.flag }` shared by all; glitch-free because all of them derive from the store's state.
final class StillwaterDerived: DerivedStore {
    static let label = "Store + select + combine"
    private let store: Store<DerivedState>
    private let flag: Property<Bool>

    init(_ initial: DerivedState) {
        store = Store(initial)
        flag = store.select { $0.flag }
    }

    var state: DerivedState { store.state.value }

    func dispatch(_ action: Bump) { store.dispatch(action) }

    func observe(item index: Int, _ onChange: @escaping (Int) -> Void) -> Any {
        Property.combine(store.select { $0.items[index] }, flag, transform: combined).observe(onChange)
    }
}
