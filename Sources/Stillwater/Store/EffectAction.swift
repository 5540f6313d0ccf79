/// An action whose reduce may also ask the store to run side effects: a request, a timer, a save.
///
/// Conform with ``reduce(into:)``, which changes the state like ``Action/reduce(_:)`` does and returns
/// an ``Effect``. The store starts the effect after the reduce (once the new state reached its
/// observers) and dispatches the actions the effect sends back, in the order it sends them, through the
/// middleware like any action. An enum of actions whose effects send its own cases is the usual shape
/// (`Output` is `Self` unless said otherwise).
///
/// ```swift
/// struct Counter { var count = 0; var fact = "" }
/// enum CounterAction: EffectAction {
///     case increment, factLoaded(String)
///     func reduce(into state: inout Counter) -> Effect<CounterAction> {
///         switch self {
///         case .increment:
///             state.count += 1
///             return .send(.factLoaded("\(state.count) is a number"))
///         case .factLoaded(let fact):
///             state.fact = fact
///             return .none
///         }
///     }
/// }
/// let store = Store(Counter())
/// store.dispatch(CounterAction.increment)
/// print(store.state.value.fact)
/// // Prints "1 is a number"
/// ```
///
/// Plain actions are untouched: an ``Action`` that is not an `EffectAction` dispatches exactly as
/// before, with no effect bookkeeping.
///
/// - Note: The store runs the effects of an effect action however it arrives: by `store.dispatch(_:)`
///   with its own type or as any `Action` (generic code, `any Action<State>`), through middleware, from
///   another effect, from a stream bound to the store (`bind(to:)`, `dispatch(to:_:)`) and from a
///   ``ScopedStore``. Only ``History/replay(_:into:)`` reduces it without its effects, because the
///   actions they sent were recorded themselves. Calling ``Action/reduce(_:)`` (which ``reduce(into:)``
///   provides) yourself changes the state and drops the effect.
public protocol EffectAction<State>: Action {
    /// The type of state this action changes (restated here so that Swift infers it from
    /// ``reduce(into:)``).
    associatedtype State

    /// The type of the actions this action's effects send back; `Self` unless said otherwise.
    associatedtype Output: Action = Self where Output.State == State

    /// Changes `state` in place and returns the work to run afterwards (``Effect/none`` for none).
    ///
    /// Runs under the store's lock, like ``Action/reduce(_:)``: it must not read its store, and it
    /// should only describe effects, not run them; the store starts them after the reduce.
    func reduce(into state: inout State) -> Effect<Output>
}

extension EffectAction {
    /// Changes `state` with ``reduce(into:)`` and drops the effect it returns (see the note on
    /// ``EffectAction``).
    @inlinable
    public func reduce(_ state: inout State) {
        _ = reduce(into: &state)
    }

    /// Reduces this action with its effects (the store's entry for actions that arrive as `any Action`).
    @inline(never)
    public func _reduce(in store: Store<State>) {
        store.reduceWithEffects(self)
    }
}
