/// A change to a store's state: the store calls ``reduce(_:)`` with its state, and the action changes it.
///
/// An enum of actions is one `Action` type whose `reduce` switches on `self` (the Redux shape); a struct per
/// action is the Delta shape. Both dispatch the same way.
///
/// ```swift
/// struct Counter { var count = 0 }
/// enum CounterAction: Action {
///     case increment, reset
///     func reduce(_ state: inout Counter) {
///         switch self {
///         case .increment: state.count += 1
///         case .reset: state.count = 0
///         }
///     }
/// }
/// let store = Store(Counter())
/// store.dispatch(CounterAction.increment)
/// print(store.state.value.count)
/// // Prints "1"
/// ```
///
/// - Important: `reduce` runs while the store's state is locked, so that a large state is changed in place
///   rather than copied. It must not read the state of the store it is reduced by (`state.value`, a
///   scope's value, or a new scope): the program then stops with a message that names the mistake ("an
///   Action's reduce read its own store…"), rather than waiting for the lock it runs under. Everything it needs is in
///   `state` and in the action. (A dispatch from `reduce` is merely queued, but reducers are clearer
///   without side effects; use a ``DynamicAction`` for those.)
public protocol Action<State> {
    /// The type of state this action changes.
    associatedtype State

    /// Changes `state` in place. Called once per dispatch, on the dispatching thread or on the thread that
    /// is reducing when the action arrives, never at the same time as another action of the same store.
    func reduce(_ state: inout State)

    /// The store's entry for reducing this action when it reaches the reducer as `any Action` (after
    /// middleware, or from an effect): a requirement only so that an ``EffectAction`` starts its effects
    /// however it arrives, with no dynamic cast on every dispatch (such a cast would make a dispatch
    /// about 24 times as costly). Provided for every action, and not part of the API: do not implement
    /// it or call it (a type that implements it is not supported).
    @_documentation(visibility: internal)
    func _reduce(in store: Store<State>)
}

extension Action {
    /// Reduces this action with ``reduce(_:)``; ``EffectAction`` provides a version that also starts the
    /// action's effects.
    @_documentation(visibility: internal)
    @inlinable
    public func _reduce(in store: Store<State>) {
        store.reduce(self)
    }
}

/// An action with side effects: it is given the store, may read its state and dispatch other actions, and
/// returns a response to the caller (the Delta shape of an asynchronous or conditional action).
///
/// ```swift
/// struct Counter { var count = 0 }
/// struct Increment: Action { func reduce(_ state: inout Counter) { state.count += 1 } }
/// struct IncrementIfEven: DynamicAction {
///     func call(_ store: Store<Counter>) -> Bool {
///         guard store.state.value.count.isMultiple(of: 2) else { return false }
///         store.dispatch(Increment())
///         return true
///     }
/// }
/// let store = Store(Counter())
/// print(store.dispatch(IncrementIfEven()), store.state.value.count)
/// // Prints "true 1"
/// ```
///
/// A dynamic action is called at once, on the dispatching thread; it is not reduced and middleware does
/// not see it (it sees the actions it dispatches). The actions it dispatches are reduced at once only
/// when nothing else is in progress: called from inside an observer or middleware, or while another
/// thread is dispatching, they are queued, so the state it reads afterwards may not show them yet. Do
/// not loop until the state changes; decide from one reading, as above, or observe the state.
public protocol DynamicAction<State> {
    /// The type of state of the store this action runs against.
    associatedtype State
    /// What ``call(_:)`` returns to the code that dispatched the action.
    associatedtype Response

    /// Runs the action's side effects against `store`.
    func call(_ store: Store<State>) -> Response
}

/// An action that changes one part of a larger state, so that a big app splits its reducing logic by
/// feature (the way Redux apps combine one reducer per branch of the state tree).
///
/// Declare which part the action owns with ``child``, and reduce only that part in ``reduce(child:)``;
/// the conformance to ``Action`` is provided.
///
/// ```swift
/// struct AppState { var todos: [String] = []; var user = "" }
/// enum TodoAction: ChildAction {
///     case add(String)
///     static var child: WritableKeyPath<AppState, [String]> { \.todos }
///     func reduce(child todos: inout [String]) {
///         switch self {
///         case .add(let title): todos.append(title)
///         }
///     }
/// }
/// let store = Store(AppState())
/// store.dispatch(TodoAction.add("milk"))
/// print(store.state.value.todos)
/// // Prints "[\"milk\"]"
/// ```
@available(*, deprecated, message: "write the part's actions as an Action of the part's state and route them from one case of the app's action: `case todo(TodoAction)` reducing with `action.reduce(&state.todos)`; or give the feature a ScopedStore with store.scope(state:action:)")
public protocol ChildAction<State>: Action {
    /// The type of the whole state (restated here so that Swift infers it from ``child``).
    associatedtype State

    /// The type of the part of the state this action changes.
    associatedtype Child

    /// Where the part lives in the whole state.
    static var child: WritableKeyPath<State, Child> { get }

    /// Changes the part in place.
    func reduce(child: inout Child)
}

@available(*, deprecated, message: "write the part's actions as an Action of the part's state and route them from one case of the app's action: `case todo(TodoAction)` reducing with `action.reduce(&state.todos)`; or give the feature a ScopedStore with store.scope(state:action:)")
extension ChildAction {
    /// Reduces the part of `state` at ``child`` with ``reduce(child:)``.
    @inlinable
    public func reduce(_ state: inout State) {
        reduce(child: &state[keyPath: Self.child])
    }
}

/// An action written for a part of a state, lifted to act on the whole state: it reduces the part at
/// `path` and leaves the rest alone. Made by ``Action/lifted(to:)``.
@available(*, deprecated, message: "route the part's action from one case of the app's action (`case counter(Increment)` reducing with `action.reduce(&state.counter)`), or give the feature a ScopedStore with store.scope(state:action:)")
public struct LiftedAction<Root, Base: Action>: Action {
    /// The action that reduces the part.
    public let base: Base
    /// Where the part lives in `Root`.
    public let path: WritableKeyPath<Root, Base.State> & Sendable

    /// Lifts `base` to reduce the part of `Root` at `path`.
    @inlinable
    public init(_ base: Base, at path: WritableKeyPath<Root, Base.State> & Sendable) {
        self.base = base
        self.path = path
    }

    /// Reduces the part of `state` at ``path`` with ``base``.
    @inlinable
    public func reduce(_ state: inout Root) {
        base.reduce(&state[keyPath: path])
    }
}

@available(*, deprecated, message: "route the part's action from one case of the app's action (`case counter(Increment)` reducing with `action.reduce(&state.counter)`), or give the feature a ScopedStore with store.scope(state:action:)")
extension LiftedAction: Sendable where Base: Sendable {}

extension Action {
    /// This action, acting on the part of a larger state at `path`.
    ///
    /// Use it to reuse a feature's actions (written against the feature's own state) in an app's store.
    ///
    /// ```swift
    /// struct Counter { var count = 0 }
    /// struct Increment: Action { func reduce(_ state: inout Counter) { state.count += 1 } }
    /// struct AppState { var counter = Counter(); var title = "" }
    /// let store = Store(AppState())
    /// store.dispatch(Increment().lifted(to: \AppState.counter))
    /// print(store.state.value.counter.count)
    /// // Prints "1"
    /// ```
    @available(*, deprecated, message: "route the part's action from one case of the app's action (`case counter(Increment)` reducing with `action.reduce(&state.counter)`), or give the feature a ScopedStore with store.scope(state:action:)")
    @inlinable
    public func lifted<Root>(to path: WritableKeyPath<Root, State> & Sendable) -> LiftedAction<Root, Self> {
        LiftedAction(self, at: path)
    }
}
