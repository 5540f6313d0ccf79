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

extension ObservableType {
    /// Dispatches into `store` the action that `makeAction` builds from each value of this stream: a
    /// shorthand for `map(makeAction).bind(to: store)`. Deprecated: the two did the same thing twice; write
    /// the `map` and the `bind` (see <doc:WhichStoreAPI>).
    ///
    /// <!-- doc-test: skip a deprecated spelling; the replacement is bind(to:) above -->
    /// ```swift
    /// struct Counter { var count = 0 }
    /// struct Add: Action {
    ///     let amount: Int
    ///     func reduce(_ state: inout Counter) { state.count += amount }
    /// }
    /// let store = Store(Counter())
    /// let onAdd = ActionHandle<Int>()
    /// let routing = onAdd.dispatch(to: store) { Add(amount: $0) }
    /// onAdd(2)
    /// onAdd(3)
    /// print(store.state.value.count)
    /// // Prints "5"
    /// ```
    ///
    /// - Returns: The routing's subscription; releasing it ends the routing. It keeps `store` alive while
    ///   the routing lasts.
    @available(*, deprecated, message: "Use map(_:).bind(to:), which does the same: onAdd.map { Add(amount: $0) }.bind(to: store)")
    public func dispatch<A: Action>(to store: Store<A.State>, _ makeAction: @escaping (Value) -> A) -> Subscription {
        observe { store.dispatchAny(makeAction($0)) }
    }
}
