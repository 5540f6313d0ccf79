/// A step that every action dispatched to a ``Store`` passes through before it is reduced: for logging,
/// recording, analytics, or blocking.
///
/// A middleware is given the store (to read the state before the action, or to dispatch others), the
/// action, and `next`, which hands an action on to the following middleware and finally to the reducer.
/// It may pass the action on (`next(action)`), replace it (`next(other)`), drop it (not call `next`), or
/// dispatch other actions (`store.dispatch(...)`, which queues them behind this one).
///
/// ```swift
/// struct Increment: Action { func reduce(_ count: inout Int) { count += 1 } }
/// struct Reset: Action { func reduce(_ count: inout Int) { count = 0 } }
/// let blockResets = Middleware<Int> { store, action, next in
///     if action is Reset { return }      // dropped
///     next(action)
/// }
/// let store = Store(0, middleware: [blockResets])
/// store.dispatch(Increment())
/// store.dispatch(Reset())
/// print(store.state.value)
/// // Prints "1"
/// ```
///
/// Middleware runs on the thread running the store's queue, one action at a time, in the order given to
/// the store. Reading `store.state.value` before `next` gives the state before the action, and after
/// `next` the state after it (`next` reduces and delivers to the state's observers before it returns).
///
/// - Important: Call `next` before the middleware returns. To reduce an action later (after a delay, on
///   another thread), dispatch it again with `store.dispatch(_:)`; it then passes through every
///   middleware again. Each call of `next` reduces the action it is given once.
public struct Middleware<State> {
    /// Hands an action on to the next middleware, or to the reducer after the last one.
    public typealias Next = (any Action<State>) -> Void

    let body: (Store<State>, any Action<State>, Next) -> Void

    /// Creates a middleware from a function of the store, the action and `next`.
    public init(_ body: @escaping (_ store: Store<State>, _ action: any Action<State>, _ next: Next) -> Void) {
        self.body = body
    }
}

extension Middleware {
    /// A middleware that lets through only the actions for which `isAllowed` returns `true`, given the
    /// action and the state before it. Other actions are dropped: not reduced, and not seen by later
    /// middleware.
    public static func filter(
        _ isAllowed: @escaping (_ action: any Action<State>, _ state: State) -> Bool
    ) -> Middleware {
        Middleware { store, action, next in
            if isAllowed(action, store.state.value) { next(action) }
        }
    }

    /// A middleware that prints each action and a summary of what it changed in the state.
    ///
    /// For a state with stored properties, the summary names each property whose description changed,
    /// with its old and new description; otherwise it shows the whole state before and after. The state
    /// should be a value type: a class instance is the same object before and after, so its changes show
    /// as "unchanged".
    ///
    /// ```swift
    /// struct Counter { var count = 0 }
    /// struct Increment: Action { func reduce(_ state: inout Counter) { state.count += 1 } }
    /// let store = Store(Counter(), middleware: [.logging(printer: { print($0) })])
    /// store.dispatch(Increment())
    /// // Prints "[store] Increment()", "[store]   count: 0 -> 1"
    /// ```
    ///
    /// - Parameters:
    ///   - label: Printed in brackets at the start of every line.
    ///   - printer: Receives each line; `print` by default (the example spells it out so that its test can
    ///     collect the lines).
    /// - Complexity: Describes the state twice per action (before and after), through `Mirror`: meant for
    ///   debugging, not for hot paths.
    public static func logging(
        _ label: String = "store", printer: @escaping (String) -> Void = { print($0) }
    ) -> Middleware {
        Middleware { store, action, next in
            let before = store.state.value
            printer("[\(label)] \(action)")
            next(action)
            for line in StateSummary.changes(from: before, to: store.state.value) {
                printer("[\(label)]   \(line)")
            }
        }
    }
}

/// Describes what changed between two states, for the logging middleware.
enum StateSummary {
    /// One line per changed stored property (`name: old -> new`), the whole state when it has no stored
    /// properties, or `unchanged`.
    static func changes<State>(from before: State, to after: State) -> [String] {
        let old = Mirror(reflecting: before).children
        let new = Mirror(reflecting: after).children
        guard !old.isEmpty, old.count == new.count else {
            let (oldText, newText) = (String(describing: before), String(describing: after))
            return oldText == newText ? ["unchanged"] : ["\(oldText) -> \(newText)"]
        }
        var lines: [String] = []
        for (index, (oldChild, newChild)) in zip(old, new).enumerated() {
            let (oldText, newText) = (String(describing: oldChild.value), String(describing: newChild.value))
            if oldText != newText {
                lines.append("\(oldChild.label ?? "#\(index)"): \(oldText) -> \(newText)")
            }
        }
        return lines.isEmpty ? ["unchanged"] : lines
    }
}
