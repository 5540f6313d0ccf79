/// An action whose reduce may also ask the store to run side effects: a request, a timer, a save.
///
/// Conform with ``reduce(into:)``, which changes the state like ``Action/reduce(_:)`` does and returns
/// an ``Effect`` (or with ``reduce(into:dependencies:)`` instead, when the reduce reads a dependency;
/// a type that implements neither does not compile). The store starts the effect after the reduce (once the new state reached its
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
///   another effect, from a stream bound to the store (`bind(to:)`) and from a
///   ``ScopedStore``. Only ``History/replay(_:into:)`` reduces it without its effects, because the
///   actions they sent were recorded themselves. Calling ``Action/reduce(_:)`` (which ``reduce(into:)``
///   provides) yourself changes the state and drops the effect.
public protocol EffectAction<State>: Action {
    /// The type of state this action changes (restated here so that Swift infers it from
    /// ``reduce(into:)``).
    associatedtype State

    /// The type of the actions this action's effects send back; `Self` unless said otherwise.
    associatedtype Output: Action = Self where Output.State == State

    /// Which of the two reduces the type implements, inferred from it; never written by hand.
    /// ``Dependencies`` when the type implements ``reduce(into:dependencies:)``,
    /// ``DependenciesNotRead`` when it implements only ``reduce(into:)``. A type that implements
    /// neither does not compile: nothing can be inferred, and neither reduce has a default.
    associatedtype ReduceDependencies = Dependencies

    /// Changes `state` in place and returns the work to run afterwards (``Effect/none`` for none).
    ///
    /// The store calls this one. Runs under the store's lock, like ``Action/reduce(_:)``: it must not
    /// read its store, and it should only describe effects, not run them; the store starts them after
    /// the reduce. A type that implements ``reduce(into:dependencies:)`` instead gets this one, which
    /// calls it with the dependencies of the store reducing it (every key's default outside a store).
    func reduce(into state: inout State) -> Effect<Output>

    /// Changes `state` in place, reading the store's `dependencies` (a clock's time, a new id), and
    /// returns the work to run afterwards. Implement it instead of ``reduce(into:)`` when the reduce
    /// needs a dependency, so a test can fix what it reads.
    ///
    /// ```swift
    /// import Foundation
    ///
    /// struct Note: Equatable { var id: UUID; var created: Date }
    /// enum Notes: EffectAction {
    ///     case add
    ///     func reduce(into notes: inout [Note], dependencies: Dependencies) -> Effect<Notes> {
    ///         notes.append(Note(id: dependencies.uuid(), created: dependencies.date.now))
    ///         return .none
    ///     }
    /// }
    /// let store = Store([Note](), dependencies: Dependencies {
    ///     $0.uuid = .incrementing
    ///     $0.date = .constant(Date(timeIntervalSince1970: 0))
    /// })
    /// store.dispatch(Notes.add)
    /// print(store.state.value[0].id, store.state.value[0].created.timeIntervalSince1970)
    /// // Prints "00000000-0000-0000-0000-000000000000 0.0"
    /// ```
    ///
    /// The dependencies are the store's, whoever reduces the action: the store itself, or a parent
    /// feature's ``Effect/forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm`` or
    /// ``Effect/ifLet(_:_:in:dependencies:fileID:line:send:)-zbc`` (with the parent's overrides), or a
    /// parent's reduce calling ``reduce(into:)`` on it.
    ///
    /// The reduce stays a function of the state, the action and the dependencies: a dependency read
    /// here should only give values (`date.now`, `uuid()`), not do work; work belongs in the effect.
    /// Runs under the store's lock, like ``reduce(into:)``.
    func reduce(into state: inout State, dependencies: ReduceDependencies) -> Effect<Output>
}

/// The type of the `dependencies` of an ``EffectAction`` that implements only ``EffectAction/reduce(into:)``:
/// its ``EffectAction/reduce(into:dependencies:)`` exists only to complete the conformance, and since no
/// value of this type can be made outside Stillwater, nobody calls it.
public struct DependenciesNotRead: Sendable {
    private init() {}
}

extension EffectAction where ReduceDependencies == Dependencies {
    /// Calls ``reduce(into:dependencies:)`` with the dependencies of the store reducing this action, or
    /// every key's default outside a store.
    public func reduce(into state: inout State) -> Effect<Output> {
        reduce(into: &state, dependencies: .current)
    }
}

extension EffectAction where ReduceDependencies == DependenciesNotRead {
    /// Calls ``reduce(into:)``, which reads no dependency. (It completes the conformance of a type that
    /// implements only ``reduce(into:)``; no ``DependenciesNotRead`` can be made to call it with.)
    public func reduce(into state: inout State, dependencies: DependenciesNotRead) -> Effect<Output> {
        reduce(into: &state)
    }
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
