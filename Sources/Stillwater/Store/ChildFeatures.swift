/// Child features: a feature per element of an identified collection (``Effect/forEach(_:id:_:in:dependencies:fileID:line:send:)``)
/// and a feature that may be absent (``Effect/ifLet(_:_:in:dependencies:fileID:line:send:)``), each one
/// `case` of the parent's `switch`.
///
/// ```swift
/// struct Row: Identifiable, Equatable { var id: Int; var count = 0 }
/// enum RowAction: EffectAction {
///     case increment
///     func reduce(into row: inout Row) -> Effect<RowAction> {
///         row.count += 1
///         return .none
///     }
/// }
/// struct Rows: Equatable { var rows: [Row] = [] }
/// enum RowsAction: EffectAction {
///     case add(Int), remove(Int), row(Int, RowAction)
///     func reduce(into state: inout Rows) -> Effect<RowsAction> {
///         switch self {
///         case .add(let id): state.rows.append(Row(id: id)); return .none
///         case .remove(let id): state.rows.removeAll { $0.id == id }; return .none
///         case .row(let id, let action): return .forEach(\.rows, id: id, action, in: &state) { .row(id, $0) }
///         }
///     }
/// }
/// let store = Store(Rows())
/// store.dispatch(RowsAction.add(1))
/// store.dispatch(RowsAction.row(1, .increment))
/// print(store.state.value.rows.map(\.count))
/// // Prints "[1]"
/// ```
///
/// What the store does for them:
/// - the child action is reduced on its element, in place, and its effect's actions come back through
///   `send` (`{ .row(id, $0) }`), so they reach the same element;
/// - the effects of a child are cancelled once the child left the state: the element was removed, or the
///   optional became `nil`. The store looks after every ``EffectAction`` it reduces while such effects
///   may run;
/// - a child action for an element that is gone (a late answer for a deleted row) is dropped, and the
///   store's `onEffectError` handler is told (a test store reports it as a failure; without a handler the
///   store writes the line to standard error), as TCA reports it.
///
/// - Note: The check that a child is still there runs after each effect action of the store, on the
///   store's state, and costs one test per child that started effects (a search of its collection). Child
///   features nested inside child features are reduced and routed at every level, but only the outermost
///   level's removals cancel effects by themselves; an inner level removes its rows' effects with
///   ``Effect/cancel(id:)`` of the id it gave them, or by removing the outer element.
public struct ChildActionForMissingElement: Error, CustomStringConvertible {
    /// What the message says.
    public let description: String
}

/// The id under which a child's effects run: the parent's key path (as text) and the child's id.
struct ChildEffectID<ID: Hashable & Sendable>: Hashable, Sendable {
    let path: String
    let id: ID
}

extension Effect where Output: Action {
    /// Reduces `action` on the element of `state[keyPath: elements]` whose id is `id`, and returns its
    /// effect with each action it sends turned into a parent action by `embed`: the parent's `case` for a
    /// row of a list.
    ///
    /// <!-- doc-test: skip a fragment: one case of the parent's switch (the type's example runs it whole) -->
    /// ```swift
    /// case .row(let id, let action): return .forEach(\.rows, id: id, action, in: &state) { .row(id, $0) }
    /// ```
    ///
    /// - Parameters:
    ///   - elements: The collection of children in the parent's state.
    ///   - id: The child's id.
    ///   - action: The child's action.
    ///   - state: The parent's state.
    ///   - dependencies: What the child's reduce reads; pass the parent's (from
    ///     ``EffectAction/reduce(into:dependencies:)``) when it reads any.
    ///   - fileID: Where the parent's `case` is, for the report of an action for a missing child.
    ///   - line: The line of that place.
    ///   - embed: Makes a parent action of each action the child's effects send.
    /// - Returns: The child's effect, mapped, cancelled by the store when the element is removed; or, when
    ///   no element has the id, no work, and a report to the store's `onEffectError` handler.
    /// - Complexity: O(*n*) to find the element, and O(*n*) after each later effect action of the store
    ///   while the child's effects may run.
    public static func forEach<Element: Identifiable, Child: EffectAction>(
        _ elements: WritableKeyPath<Output.State, [Element]>, id: Element.ID, _ action: Child,
        in state: inout Output.State, dependencies: Dependencies = Dependencies(),
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Child.State == Element, Element.ID: Sendable, Output: Sendable {
        guard let index = state[keyPath: elements].firstIndex(where: { $0.id == id }) else {
            return Effect(.report(ChildActionForMissingElement(description:
                "\(fileID):\(line): \(action) arrived for id \(id), which \(elements) no longer holds; the action was dropped. An effect of a removed element should be cancelled with it, or the element removed later.")))
        }
        let effect = action.reduce(into: &state[keyPath: elements][index], dependencies: dependencies)
        guard !effect.isNone else { return .none }
        let scope = ChildEffectID(path: "\(elements)", id: id)
        return Effect(.child(EffectID(scope), isPresent: { root in
            guard let parent = root as? Output.State else { return true }
            return parent[keyPath: elements].contains { $0.id == id }
        }, effect.map(embed)))
    }

    /// Reduces `action` on the optional child at `state[keyPath: child]`, and returns its effect with each
    /// action it sends turned into a parent action by `embed`: the parent's `case` for a detail that may
    /// be absent.
    ///
    /// <!-- doc-test: skip a fragment: one case of the parent's switch -->
    /// ```swift
    /// case .detail(let action): return .ifLet(\.detail, action, in: &state) { .detail($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - child: The optional child in the parent's state.
    ///   - action: The child's action.
    ///   - state: The parent's state.
    ///   - dependencies: What the child's reduce reads; pass the parent's when it reads any.
    ///   - fileID: Where the parent's `case` is, for the report of an action for an absent child.
    ///   - line: The line of that place.
    ///   - embed: Makes a parent action of each action the child's effects send.
    /// - Returns: The child's effect, mapped, cancelled by the store when the child becomes `nil`; or,
    ///   when it is `nil`, no work, and a report to the store's `onEffectError` handler.
    public static func ifLet<Child: EffectAction>(
        _ child: WritableKeyPath<Output.State, Child.State?>, _ action: Child,
        in state: inout Output.State, dependencies: Dependencies = Dependencies(),
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Output: Sendable {
        guard state[keyPath: child] != nil else {
            return Effect(.report(ChildActionForMissingElement(description:
                "\(fileID):\(line): \(action) arrived while \(child) is nil; the action was dropped.")))
        }
        let effect = action.reduce(into: &state[keyPath: child]!, dependencies: dependencies)
        guard !effect.isNone else { return .none }
        return Effect(.child(EffectID(ChildEffectID(path: "\(child)", id: 0)), isPresent: { root in
            guard let parent = root as? Output.State else { return true }
            return parent[keyPath: child] != nil
        }, effect.map(embed)))
    }
}
