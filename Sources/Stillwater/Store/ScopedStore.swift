/// A feature's view of a larger store: the feature's part of the state, read deduplicated, and the
/// feature's own actions, dispatched into the parent store embedded in the parent's actions.
///
/// Made by ``Store/scope(state:action:)``. A feature written against a scoped store knows only its own
/// state and action types, so it is written (and tested, with a `TestStore` of its own state and
/// actions) on its own, and the app embeds it in one case of its action enum.
///
/// ```swift
/// struct Counter: Equatable { var count = 0 }
/// enum CounterAction: EffectAction {
///     case increment
///     func reduce(into state: inout Counter) -> Effect<CounterAction> {
///         state.count += 1
///         return .none
///     }
/// }
/// struct App { var counter = Counter(); var title = "" }
/// enum AppAction: EffectAction {
///     case counter(CounterAction), rename(String)
///     func reduce(into state: inout App) -> Effect<AppAction> {
///         switch self {
///         case .counter(let action):
///             return action.reduce(into: &state.counter).map(AppAction.counter)
///         case .rename(let title):
///             state.title = title
///             return .none
///         }
///     }
/// }
/// let store = Store(App())
/// let counter = store.scope(state: \.counter, action: AppAction.counter)
/// let subscription = counter.state.observe { print("count", $0.count) }
/// counter.dispatch(.increment)
/// store.dispatch(AppAction.rename("Clicks"))      // the counter's part did not change: nothing printed
/// // Prints "count 0", "count 1"
/// ```
///
/// The scoped store holds its parent (so it keeps the parent and its effects alive while it is kept),
/// and adds no queue of its own: its dispatches are the parent's, reduced in the parent's order, through
/// the parent's middleware. When the parent's actions are ``EffectAction``s, a dispatch returns the
/// ``StoreTask`` of the parent's action it was embedded in, as ``Store/dispatch(_:)-(E)`` does.
public final class ScopedStore<State: Equatable, FeatureAction> {
    /// The feature's part of the parent's state, told to observers only when it changed.
    public let state: Property<State>
    private let send: @Sendable (sending FeatureAction) -> StoreTask

    init(state: Property<State>, send: @escaping @Sendable (sending FeatureAction) -> StoreTask) {
        self.state = state
        self.send = send
    }

    /// Dispatches `action` into the parent store, embedded in the parent's action; safe from any thread,
    /// queued like any dispatch of the parent.
    ///
    /// ```swift
    /// enum Load: EffectAction {
    ///     case load, loaded(Int)
    ///     func reduce(into value: inout Int) -> Effect<Load> {
    ///         switch self {
    ///         case .load: return .run { send, _ in send(.loaded(42)) }
    ///         case .loaded(let number):
    ///             value = number
    ///             return .none
    ///         }
    ///     }
    /// }
    /// struct Screen { var value = 0 }
    /// enum ScreenAction: EffectAction {
    ///     case value(Load)
    ///     func reduce(into state: inout Screen) -> Effect<ScreenAction> {
    ///         guard case .value(let action) = self else { return .none }
    ///         return action.reduce(into: &state.value).map(ScreenAction.value)
    ///     }
    /// }
    /// let store = Store(Screen())
    /// let value = store.scope(state: \.value, action: ScreenAction.value)
    /// await value.dispatch(.load).finish()
    /// print(value.state.value)
    /// // Prints "42"
    /// ```
    ///
    /// - Returns: The effects of the parent's action `action` was embedded in, with the effects of the
    ///   actions they send (the same task ``Store/dispatch(_:)-(E)`` returns for that action): `await` its
    ///   ``StoreTask/finish()``, or ``StoreTask/cancel()`` them. When the parent's actions are plain
    ///   ``Action``s (no effects), or every effect ended during the dispatch, the task is already finished.
    @discardableResult
    public func dispatch(_ action: sending FeatureAction) -> StoreTask {
        send(action)
    }

    /// A read-only property of one `Equatable` part of this store's state, told to its observers only
    /// when that part changed (the same node as `state.scope(keyPath)`).
    public func scope<Sub: Equatable>(_ keyPath: KeyPath<State, Sub>) -> Property<Sub> {
        state.scope(keyPath)
    }

    /// A scoped store of a part of this one: its state at `keyPath`, its actions embedded with `embed`
    /// in this store's actions.
    ///
    /// `embed` runs on whichever thread sends to the scoped store, so it is `@Sendable` (an enum case
    /// is).
    public func scope<ChildState: Equatable, InnerAction>(
        state keyPath: KeyPath<State, ChildState>,
        action embed: @escaping @Sendable (InnerAction) -> FeatureAction
    ) -> ScopedStore<ChildState, InnerAction> {
        let send = send
        return ScopedStore<ChildState, InnerAction>(state: state.scope(keyPath), send: { send(embed($0)) })
    }

    /// ``scope(state:action:)`` with an `embed` that is not `@Sendable`.
    @available(*, deprecated, message: "make `embed` @Sendable: an enum case (`FeatureAction.child`) already is; a closure must capture only Sendable values")
    @_disfavoredOverload
    @_documentation(visibility: internal)
    public func scope<ChildState: Equatable, InnerAction>(
        state keyPath: KeyPath<State, ChildState>,
        action embed: @escaping (InnerAction) -> FeatureAction
    ) -> ScopedStore<ChildState, InnerAction> {
        // nonisolated(unsafe): the deprecated spelling keeps the old rule, `embed` a pure function of its
        // argument, which the compiler does not check.
        nonisolated(unsafe) let embed = embed
        return scope(state: keyPath, action: { @Sendable in embed($0) })
    }
}

extension ScopedStore: ObservableType {
    /// Registers `observer` for the current state of the part first, then each change of it.
    public func subscribe(_ observer: @escaping (Event<State>) -> Void) -> Subscription {
        state.subscribe(observer)
    }

    /// The part's states as an ``Observable``.
    public func asObservable() -> Observable<State> {
        state.asObservable()
    }
}

extension Store {
    /// A store for one feature: the part of the state at `keyPath` (deduplicated, as ``scope(_:)``
    /// reads it) and the feature's actions, which `embed` wraps in this store's actions when they are
    /// dispatched (`AppAction.counter`, an enum case taking the feature's action).
    ///
    /// The parent's action reduces the feature's part, usually by calling the feature action's own
    /// reduce on it and mapping its effect with ``Effect/map(_:)``, as the example of ``ScopedStore``
    /// shows. An embedded ``EffectAction`` starts its effects as if dispatched to this store directly.
    ///
    /// The scoped store's ``ScopedStore/dispatch(_:)`` returns the ``StoreTask`` of the parent's action
    /// when `ParentAction` is an ``EffectAction`` (decided once, here), and a finished task otherwise.
    ///
    /// `embed` runs on whichever thread sends to the scoped store, so it is `@Sendable` (an enum case
    /// is).
    public func scope<ChildState: Equatable, FeatureAction, ParentAction: Action>(
        state keyPath: KeyPath<State, ChildState>,
        action embed: @escaping @Sendable (FeatureAction) -> ParentAction
    ) -> ScopedStore<ChildState, FeatureAction> where ParentAction.State == State {
        scopedStore(state: keyPath, action: embed)
    }

    /// ``scope(state:action:)`` with an `embed` that is not `@Sendable`.
    @available(*, deprecated, message: "make `embed` @Sendable: an enum case (`ParentAction.child`) already is; a closure must capture only Sendable values")
    @_disfavoredOverload
    @_documentation(visibility: internal)
    public func scope<ChildState: Equatable, FeatureAction, ParentAction: Action>(
        state keyPath: KeyPath<State, ChildState>,
        action embed: @escaping (FeatureAction) -> ParentAction
    ) -> ScopedStore<ChildState, FeatureAction> where ParentAction.State == State {
        // The old rule, which the compiler does not check: `embed` is a pure function of its argument.
        scopedStore(state: keyPath, action: embed)
    }

    /// Both spellings of ``scope(state:action:)``: the public one hands over an `embed` the compiler
    /// checked `@Sendable`, the deprecated one an `embed` it did not.
    private func scopedStore<ChildState: Equatable, FeatureAction, ParentAction: Action>(
        state keyPath: KeyPath<State, ChildState>,
        action embed: @escaping (FeatureAction) -> ParentAction
    ) -> ScopedStore<ChildState, FeatureAction> where ParentAction.State == State {
        let send: (sending FeatureAction) -> StoreTask
        if let effectActions = ParentAction.self as? any EffectAction<State>.Type {
            send = effectSend(effectActions, embed)
        } else {
            send = { [self] in
                dispatchAny(embed($0))
                return StoreTask(nil)
            }
        }
        // nonisolated(unsafe): `send` calls `embed` (`@Sendable` but for the deprecated spelling), then
        // dispatches to the store, which is safe from any thread whatever its state (see `dispatch`): it
        // never reads the state, the part that makes a store `Sendable` only for a `Sendable` state.
        // What the compiler cannot see is that, and the action types' metadata the generic dispatch uses.
        nonisolated(unsafe) let dispatch = send
        return ScopedStore(state: scope(keyPath), send: { dispatch($0) })
    }

    /// The send of a scoped store whose parent actions (`ParentAction`, which is `E`) are effect actions:
    /// the dispatch that returns their ``StoreTask``.
    private func effectSend<E: EffectAction, FeatureAction, ParentAction>(
        _: E.Type, _ embed: @escaping (FeatureAction) -> ParentAction
    ) -> (sending FeatureAction) -> StoreTask where E.State == State {
        { [self] (action: sending FeatureAction) in dispatch(embed(action) as! E) }
    }
}

// Checked: `state` is `Sendable` for a `Sendable` state, and `send` is a `@Sendable` closure (the user's
// `@Sendable` `embed`, then the parent store's dispatch, safe from any thread).
extension ScopedStore: Sendable where State: Sendable {}
