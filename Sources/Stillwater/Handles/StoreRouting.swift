extension ObservableType where Value: Action {
    /// Dispatches every value of this stream into `store`, in order: the way a parent routes a child's
    /// ``ActionHandle`` into its store.
    ///
    /// ```swift
    /// struct Todos { var done: Set<Int> = [] }
    /// enum TodoAction: Action {
    ///     case toggle(Int)
    ///     func reduce(_ state: inout Todos) {
    ///         switch self {
    ///         case .toggle(let id): if state.done.remove(id) == nil { state.done.insert(id) }
    ///         }
    ///     }
    /// }
    /// let store = Store(Todos())
    /// let onToggle = ActionHandle<Int>()                       // handed to the rows
    /// let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)
    /// onToggle(4)
    /// print(store.state.value.done)
    /// // Prints "[4]"
    /// ```
    ///
    /// Each value is dispatched as by ``Store/dispatch(_:)-(A)``, so middleware sees it, and a value that
    /// arrives while the store is reducing (from another thread, or from one of its observers) is queued
    /// behind the current action; an ``EffectAction`` starts its effects. Terminal events end the
    /// binding, not the store.
    ///
    /// A store is not a ``BindingTarget``, so this is an overload of its own rather than
    /// ``bind(to:)-(Target)``: a target takes one ``BindingTarget/Input`` type, and a store takes every
    /// action type whose `State` is its state (an enum of actions, a struct per action, a lifted child
    /// action). Conforming with `Input` as `any Action<State>` would bind only streams of that existential,
    /// so `onToggle.map { TodoAction.toggle($0) }.bind(to: store)` would no longer compile; this overload
    /// takes a stream of any one action type and dispatches it with its type known.
    ///
    /// - Returns: The binding's subscription; releasing it ends the binding. It keeps `store` alive while
    ///   the binding lasts.
    public func bind(to store: Store<Value.State>) -> Subscription {
        observe { store.dispatchAny($0) }
    }
}
