/// A unidirectional store: one state, changed only by dispatched actions, observed as a property.
///
/// The state is a ``Property``: read it with `state.value`, observe it, or observe one part of it through
/// ``scope(_:)``, whose observers are told only when that part changed. Actions are reduced one at a time,
/// in arrival order, whichever threads dispatch them.
///
/// ```swift
/// struct Counter { var count = 0; var title = "Clicks" }
/// struct Increment: Action {
///     func reduce(_ state: inout Counter) { state.count += 1 }
/// }
/// let store = Store(Counter())
/// let subscription = store.scope(\.count).observe { print($0) }
/// store.dispatch(Increment())
/// // Prints "0", "1"
/// ```
///
/// Reentrancy: an action dispatched while another is being reduced or delivered (by an observer, by
/// middleware, by a dynamic action, or from another thread) is queued and reduced next, after every
/// observer saw the state before it. So while observers are told of state N, `state.value` reads N, and
/// every observer sees every state, in order. Nothing nests, and a long chain of dispatches from observers
/// does not grow the stack.
///
/// Memory: the store holds its state and middleware; observers hold only the state's property. A store
/// nobody references is freed, with its middleware, whether or not its state is still observed.
public final class Store<State> {
    @usableFromInline let storage: RootStorage<State>
    /// The store's running effects, its dependencies, and what only its deliverer touches (reached
    /// through ``deliverer`` and ``middleware``).
    @usableFromInline let effects: EffectRuntime

    /// The state, as a read-only property: `state.value` is the current state; subscribing delivers it,
    /// then every new state.
    public let state: Property<State>

    /// Creates a store holding `initialState`.
    ///
    /// - Parameters:
    ///   - initialState: The state before any action.
    ///   - middleware: Run in order for every dispatched action, before it is reduced; each passes the
    ///     action on to the next (or replaces or drops it). See ``Middleware``.
    public convenience init(_ initialState: State, middleware: [Middleware<State>] = []) {
        self.init(initialState, dependencies: Dependencies(), middleware: middleware, onEffectError: nil)
    }

    /// Creates a store holding `initialState`, whose effects read `dependencies` and hand the errors they
    /// do not handle to `onEffectError`.
    ///
    /// ```swift
    /// struct Failure: Error {}
    /// enum Save: EffectAction {
    ///     case save
    ///     func reduce(into state: inout Int) -> Effect<Save> {
    ///         .stream(Observable<Save>.failure(Failure()))
    ///     }
    /// }
    /// let store = Store(0, dependencies: Dependencies(), onEffectError: { print("failed:", $0) })
    /// store.dispatch(Save.save)
    /// // Prints "failed: Failure()"
    /// ```
    ///
    /// - Parameters:
    ///   - initialState: The state before any action.
    ///   - dependencies: What effects read when they start (`Effect.stream(_:)` with a function of the dependencies,
    ///     ``Effect/run(priority:_:catch:)``); a test passes its fakes here.
    ///   - middleware: Run in order for every dispatched action, before it is reduced (see ``Middleware``).
    ///   - onEffectError: Called, on the thread the error arrives on, with every error an effect fails
    ///     with that the effect did not handle itself (a failing stream, a `run` without `catch`). Without
    ///     one, the store writes a line naming the error to standard error.
    public init(
        _ initialState: State, dependencies: Dependencies, middleware: [Middleware<State>] = [],
        onEffectError: (@Sendable (any Error) -> Void)? = nil
    ) {
        storage = RootStorage(initialState, policy: .storeState)
        state = Property(storage: storage)
        let chain = middleware.isEmpty ? nil : MiddlewareChain<State>(middleware)
        effects = EffectRuntime(
            dependencies: dependencies, onError: onEffectError ?? writeEffectErrorToStandardError, middleware: chain)
        chain?.attach(self)
    }

    /// Cancels every effect still running: their streams are unsubscribed and their tasks cancelled, so
    /// what they captured is released (a task's once it stops), and nothing they send is reduced.
    deinit {
        effects.cancelAll()
        // The deliverer's value may keep a spare sink (and with it the runtime: a cycle) or a group (whose
        // completion holds the runtime). Nobody delivers for a store that is gone (its queued work holds
        // it), so the field is emptied here directly, without `deliverer`'s check of the thread.
        effects.owned = StoreDeliverer()
    }

    /// Reduces `action` now, or queues it behind the delivery in progress.
    ///
    /// Safe from any thread. The store's actions, the deliveries of its state and the arrival and
    /// departure of its state's observers share one queue: when nothing is in progress, the action is
    /// reduced and its state delivered before `dispatch` returns. Otherwise (a dispatch on another thread,
    /// a dispatch from inside an observer, a subscription being made or cancelled) the action is queued,
    /// and the thread running the queue reduces it after the current work, before that thread returns.
    ///
    /// Observers therefore run on whichever thread runs the queue; use ``ObservableType/observe(on:)``
    /// to move them to a scheduler of your choice.
    ///
    /// The action is `sending`: it may be reduced on the thread running the queue, so the caller hands it
    /// over and does not touch it afterwards (the compiler checks this); an action of a `Sendable` type
    /// can be dispatched from anywhere, as often as wanted.
    ///
    /// - Complexity: Without middleware and without contention, one reduce in place under a lock, no
    ///   allocation, and one delivery: each scope reads and compares its slice where the new state lies
    ///   and tells its observers only when it changed; the whole state is copied (once) only when some
    ///   observer takes the whole state.
    @inlinable
    public func dispatch<A: Action>(_ action: sending A) where A.State == State {
        // A plain parameter from here on: the `sending` hand-over is checked at the call site. With the
        // body below written here, the owned `sending` parameter that the queued closure captures is
        // put in a box on every dispatch, closure made or not (swift_allocEmptyBox and its release:
        // 46 instructions, +13% of a dispatch).
        dispatchHandedOver(action)
    }

    /// ``dispatch(_:)-(A)`` once the caller handed `action` over.
    @inlinable
    func dispatchHandedOver<A: Action>(_ action: A) where A.State == State {
        // The store keeps its core for its whole life, so the core is borrowed here rather than retained
        // for the length of the dispatch (two atomic operations saved on every action).
        Unmanaged.passUnretained(storage.core)._withUnsafeGuaranteedRef { core in
            if core.queue.tryAcquire() {
                perform(action)
                core.finishDelivering()
            } else if core.enqueue(.perform({ [self] in perform(action) })) {
                core.finishDelivering()
            }
        }
    }

    /// Calls the dynamic action at once, on this thread, and returns its response.
    ///
    /// The actions it dispatches go through ``dispatch(_:)-(A)``: when this call is made from inside an
    /// observer or middleware, they are queued behind the current action.
    @inlinable
    @discardableResult
    public func dispatch<D: DynamicAction>(_ action: D) -> D.Response where D.State == State {
        action.call(self)
    }

    /// A read-only property of one `Equatable` part of the state, whose observers are told only when
    /// that part changed.
    ///
    /// Scopes of one key path share one node (the same as `state.scope(keyPath)`): a hundred observers of
    /// `scope(\.count)` cost one read and one comparison per new state. The slice is read where the new
    /// state lies, under the store's lock, so the whole state is not copied for a scope; the key path and
    /// the slice's `==` must therefore not read the store.
    ///
    /// - Complexity: Per new state, one key-path read and one comparison, then one call per observer of
    ///   the scope when the part changed.
    @inlinable
    public func scope<Sub: Equatable>(_ keyPath: KeyPath<State, Sub>) -> Property<Sub> {
        state.scope(keyPath)
    }

    /// A read-only property of what `selector` computes from the state, told to its observers only when
    /// it changed.
    ///
    /// The selector runs once per new state while the property is observed, however many observers it
    /// has, and not at all while nobody observes it. Selects, maps and combinations of one store never
    /// show a state that never existed: after one dispatch, each computes once, from the new state only,
    /// and emits at most once (see <doc:DerivedProperties>). Unlike ``scope(_:)``, the selector runs
    /// outside the store's lock, on a copy of the state, so it may read anything.
    ///
    /// ```swift
    /// struct Shop { var items: [String] = []; var filter = "" }
    /// enum ShopAction: Action {
    ///     case add(String), search(String)
    ///     func reduce(_ state: inout Shop) {
    ///         switch self {
    ///         case .add(let item): state.items.append(item)
    ///         case .search(let text): state.filter = text
    ///         }
    ///     }
    /// }
    /// let store = Store(Shop())
    /// let matches = store.select { shop in shop.items.filter { $0.hasPrefix(shop.filter) }.count }
    /// let subscription = matches.observe { print("matches", $0) }
    /// store.dispatch(ShopAction.add("swift"))
    /// store.dispatch(ShopAction.add("rust"))
    /// store.dispatch(ShopAction.search("sw"))
    /// // Prints "matches 0", "matches 1", "matches 2", "matches 1"
    /// ```
    @inlinable
    public func select<T: Equatable>(_ selector: @escaping (State) -> T) -> Property<T> {
        Property<T>(storage: storage.derivation.mapped(deduplicating: selector))
    }

    // MARK: Reducing (the thread running the state's queue only)

    @inlinable
    func perform<A: Action>(_ action: A) where A.State == State {
        if effects.middleware != nil {
            performThroughMiddleware(action)
        } else {
            // A plain action reduces (the default `_reduce(in:)` is `reduce`, inlined for a concrete type);
            // an effect action also starts its effects, whatever static type it was dispatched as.
            action._reduce(in: self)
        }
    }

    /// ``perform(_:)`` for a store with middleware. Not inlined: what each dispatch carries inline stays
    /// small, so the dispatch without middleware is inlined into its caller.
    @inlinable @inline(never)
    func performThroughMiddleware<A: Action>(_ action: A) where A.State == State {
        // Only a store's own chain is ever set there, made for its state type in `init`.
        unsafeDowncast(effects.middleware.unsafelyUnwrapped, to: MiddlewareChain<State>.self).run(action)
    }

    @inlinable
    func reduce<A: Action>(_ action: A) where A.State == State {
        storage.core.modifyAndDeliverOwned { action.reduce(&$0) }
        // A plain action may remove a child feature too: its effects stop before the next action.
        if effects.owned.hasChildren { cancelDepartedChildren() }
    }

    // MARK: The deliverer's state

    /// What only the deliverer touches (see ``StoreDeliverer``), reached here alone: debug builds stop a
    /// thread that is not the state's deliverer with ``delivererRule``.
    @inlinable
    var deliverer: StoreDeliverer {
        _read {
            storage.core.queue.checkOwned(Self.delivererRule)
            yield effects.owned
        }
        _modify {
            storage.core.queue.checkOwned(Self.delivererRule)
            yield &effects.owned
        }
    }

    /// What a thread that touches the deliverer's state without being the deliverer is told.
    @usableFromInline
    static var delivererRule: StaticString {
        "Stillwater store rule broken: a store's effect groups, cancel tokens and child features (its StoreDeliverer) are touched only by the thread reducing its actions, which won its state's queue; this thread did not. Reach them through dispatch, which queues the work for that thread."
    }
}

/// A store's middleware, in order, ending in the reducer: what ``Store/perform(_:)`` runs for each
/// action when the store has middleware. Made in `init`, run by the deliverer only.
@usableFromInline
final class MiddlewareChain<State> {
    /// The chain. A constant, so running it checks no access (a `var` would add a runtime exclusivity
    /// check to every dispatch, and enough code to keep the dispatch from being inlined).
    @usableFromInline
    let run: (any Action<State>) -> Void
    /// Where the layers find the store.
    private let target = StoreTarget<State>()

    init(_ middleware: [Middleware<State>]) {
        let target = target
        var next: (any Action<State>) -> Void = { action in
            guard let store = target.store else { return }
            action._reduce(in: store)
        }
        for layer in middleware.reversed() {
            let inner = next
            next = { action in
                guard let store = target.store else { return }
                layer.body(store, action, inner)
            }
        }
        run = next
    }

    /// Points the layers at `store`, once, in the store's `init`, before it is shared.
    func attach(_ store: Store<State>) {
        target.store = store
    }
}

/// The store a middleware chain runs in: weak, so the middleware (which the store owns) do not keep it
/// alive.
final class StoreTarget<State> {
    weak var store: Store<State>?
}

// Checked: every field is a constant of a `Sendable` type. What only the deliverer touches (its
// `StoreDeliverer`, the middleware) is in `effects`, whose reason says why it may cross threads.
extension Store: Sendable where State: Sendable {}

extension Store: ObservableType {
    /// Registers `observer` for the current state first, then every new state (the same as subscribing to
    /// ``state``).
    public func subscribe(_ observer: @escaping (Event<State>) -> Void) -> Subscription {
        state.subscribe(observer)
    }

    /// The store's state as an ``Observable``: the same stream as `state.asObservable()`.
    @inlinable
    public func asObservable() -> Observable<State> {
        state.asObservable()
    }
}

extension Store where State: Sendable {
    /// The states, as an async sequence: the current state first, then every new state, without end.
    ///
    /// ```swift
    /// struct Counter { var count = 0 }
    /// struct Increment: Action { func reduce(_ state: inout Counter) { state.count += 1 } }
    /// let store = Store(Counter())
    /// store.dispatch(Increment())
    /// for await counter in store.values {
    ///     print("count", counter.count)
    ///     if counter.count == 3 { break }
    ///     store.dispatch(Increment())
    /// }
    /// // Prints "count 1", "count 2", "count 3"
    /// ```
    ///
    /// A slow consumer gets every state by default (``ValuesBuffering/unbounded``); see ``Property/values``.
    public var values: ObservableValues<State, Never> {
        state.values
    }
}
