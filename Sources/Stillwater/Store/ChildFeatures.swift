/// Child features: a feature per element of an identified collection (``Effect/forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm``)
/// and a feature that may be absent (``Effect/ifLet(_:_:in:dependencies:fileID:line:send:)-zbc``), each one
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
/// - the child reads the store's dependencies (a `TestStore`'s in a test) in its reduce, its effects and
///   its own children, with nothing passed down; `dependencies: { $0.date = … }` changes keys for one
///   child's subtree;
/// - the child's cancel ids are its own: two rows' `"save"` are two ids, and a row's `.cancel(id:)`
///   reaches its own effects only (`acrossStore: true` makes an id the store's);
/// - the effects of a child are cancelled once the child left the state: the element was removed, or the
///   optional became `nil`, at any level of nesting (a row of a row: the inner `forEach` or `ifLet` is
///   lifted through each level above it, so removing the outer element cancels its rows' effects too, and
///   equal ids in two different parents are different children);
/// - a child action for an element that is gone (a late answer for a deleted row) is dropped, and the
///   store's `onEffectError` handler is told (a test store reports it as a failure; without a handler the
///   store writes the line to standard error), as TCA reports it.
///
/// When a removal is noticed: the store tests whether each child that started effects is still in its
/// state after it reduces any action — an ``EffectAction`` or a plain ``Action``, the parent's own, one an
/// effect sent, or a replay — so a departed child's effects are cancelled before the next action is
/// reduced. A store none of whose children has effects running tests nothing (one check of an empty
/// table per action).
///
/// - Note: The test costs, per child that started effects, one search of its collection per level of
///   nesting, and for a nested child one copy of each enclosing element found (an allocation when the
///   element is larger than three words); a child at the top level is tested in place. It can see a child only through `forEach` and `ifLet` at every level above it: a child
///   feature whose parent's effects reach the store through a hand-written `Effect.map` (as a
///   ``ScopedStore``'s feature does) is taken for present, so its effects stop when cancelled by id, or
///   with the outer element that holds it.
public struct ChildActionForMissingElement: Error, CustomStringConvertible {
    /// What the message says.
    public let description: String
}

/// The id under which a child's effects run: the key path of the collection in the parent's state and
/// the child's id in it.
struct ChildEffectID<ID: Hashable & Sendable>: Hashable, Sendable {
    let path: ChildPath
    let id: ID
}

/// The key path of a collection of children (a `forEach`'s array, an `ifLet`'s optional) as a `Hashable`
/// value: two are one collection only when the key paths are equal (the same root type, the same
/// properties, the same subscript arguments), not when they merely print alike (`\.lists[0]` and
/// `\.lists[1]` print the same text, as do `\State.rows` of two types named `State`).
struct ChildPath: Hashable, Sendable {
    // nonisolated(unsafe): a key path is immutable once made; what in it is not `Sendable` is a subscript's
    // arguments, which it only hashes and compares, and ids are hashed and compared on the store's
    // deliverer alone (its token table and its child features).
    nonisolated(unsafe) let keyPath: AnyKeyPath

    init(_ keyPath: AnyKeyPath) {
        self.keyPath = keyPath
    }
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
    /// The child reads the store's dependencies (a test store's in a test): in its reduce, in its effects
    /// and in its own children, with nothing passed down. Its cancel ids are its own (see
    /// ``cancellable(id:cancelInFlight:acrossStore:)``).
    ///
    /// - Parameters:
    ///   - elements: The collection of children in the parent's state.
    ///   - id: The child's id.
    ///   - action: The child's action.
    ///   - state: The parent's state.
    ///   - dependencies: Changes to the dependencies of this child's subtree (its reduce, its effects and
    ///     its children), made to the store's: `{ $0.uuid = .incrementing }`. `nil` (the default) for
    ///     the store's as they are.
    ///   - fileID: Where the parent's `case` is, for the report of an action for a missing child.
    ///   - line: The line of that place.
    ///   - embed: Makes a parent action of each action the child's effects send.
    /// - Returns: The child's effect, mapped, cancelled by the store when the element is removed; or, when
    ///   no element has the id, no work, and a report to the store's `onEffectError` handler.
    /// - Complexity: O(*n*) to find the element, and O(*n*) for each level of nesting after each later
    ///   effect action of the store while the child's effects may run.
    public static func forEach<Element: Identifiable, Child: EffectAction>(
        _ elements: WritableKeyPath<Output.State, [Element]>, id: Element.ID, _ action: Child,
        in state: inout Output.State, dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Child.State == Element, Element.ID: Sendable, Output: Sendable {
        guard let index = state[keyPath: elements].firstIndex(where: { $0.id == id }) else {
            return Effect(.report(ChildActionForMissingElement(description:
                "\(fileID):\(line): \(action) arrived for id \(id), which \(elements) no longer holds; the action was dropped. An effect of a removed element should be cancelled with it, or the element removed later.")))
        }
        let effect = Effect<Child.Output>.reduceChild(changing: dependencies) { action.reduce(into: &state[keyPath: elements][index]) }
        guard !effect.isNone else { return .none }
        let path = ChildPath(elements)
        return effect.map(embed).asChild(
            EffectID(ChildEffectID(path: path, id: id)),
            ChildPresence(
                collection: EffectID(ChildCollectionID(path: path)), element: AnyHashable(id),
                visit: { root, type, body in
                    guard type == Output.State.self else { return false }
                    for element in root.assumingMemoryBound(to: Output.State.self).pointee[keyPath: elements] {
                        if body(AnyHashable(element.id)) { break }
                    }
                    return true
                }),
            locatedBy: { root, type, body in
                guard type == Output.State.self else { return false }
                guard let element = root.assumingMemoryBound(to: Output.State.self).pointee[keyPath: elements]
                    .first(where: { $0.id == id }) else { return true }
                return withUnsafePointer(to: element) { body(UnsafeRawPointer($0), Element.self) }
            })
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
    /// The child reads the store's dependencies, and its cancel ids are its own, as with
    /// ``forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm``.
    ///
    /// - Parameters:
    ///   - child: The optional child in the parent's state.
    ///   - action: The child's action.
    ///   - state: The parent's state.
    ///   - dependencies: Changes to the dependencies of this child's subtree, made to the store's; `nil`
    ///     (the default) for the store's as they are.
    ///   - fileID: Where the parent's `case` is, for the report of an action for an absent child.
    ///   - line: The line of that place.
    ///   - embed: Makes a parent action of each action the child's effects send.
    /// - Returns: The child's effect, mapped, cancelled by the store when the child becomes `nil`; or,
    ///   when it is `nil`, no work, and a report to the store's `onEffectError` handler.
    public static func ifLet<Child: EffectAction>(
        _ child: WritableKeyPath<Output.State, Child.State?>, _ action: Child,
        in state: inout Output.State, dependencies: (@Sendable (inout Dependencies) -> Void)? = nil,
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Output: Sendable {
        guard state[keyPath: child] != nil else {
            return Effect(.report(ChildActionForMissingElement(description:
                "\(fileID):\(line): \(action) arrived while \(child) is nil; the action was dropped.")))
        }
        let effect = Effect<Child.Output>.reduceChild(changing: dependencies) { action.reduce(into: &state[keyPath: child]!) }
        guard !effect.isNone else { return .none }
        let path = ChildPath(child)
        return effect.map(embed).asChild(
            EffectID(ChildEffectID(path: path, id: 0)),
            ChildPresence(
                collection: EffectID(ChildCollectionID(path: path)), element: AnyHashable(0),
                visit: { root, type, body in
                    guard type == Output.State.self else { return false }
                    if root.assumingMemoryBound(to: Output.State.self).pointee[keyPath: child] != nil {
                        _ = body(AnyHashable(0))
                    }
                    return true
                }),
            locatedBy: { root, type, body in
                guard type == Output.State.self else { return false }
                guard let present = root.assumingMemoryBound(to: Output.State.self).pointee[keyPath: child] else {
                    return true
                }
                return withUnsafePointer(to: present) { body(UnsafeRawPointer($0), Child.State.self) }
            })
    }

    /// ``forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm`` with dependencies of the child's own.
    @available(*, deprecated, message: "leave `dependencies:` out: the child reads the store's dependencies; to change some for the child's subtree, pass a closure: `dependencies: { $0.uuid = .incrementing }`")
    public static func forEach<Element: Identifiable, Child: EffectAction>(
        _ elements: WritableKeyPath<Output.State, [Element]>, id: Element.ID, _ action: Child,
        in state: inout Output.State, dependencies: Dependencies,
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Child.State == Element, Element.ID: Sendable, Output: Sendable {
        forEach(elements, id: id, action, in: &state, dependencies: { $0 = dependencies },
                fileID: fileID, line: line, send: embed)
    }

    /// ``ifLet(_:_:in:dependencies:fileID:line:send:)-zbc`` with dependencies of the child's own.
    @available(*, deprecated, message: "leave `dependencies:` out: the child reads the store's dependencies; to change some for the child's subtree, pass a closure: `dependencies: { $0.uuid = .incrementing }`")
    public static func ifLet<Child: EffectAction>(
        _ child: WritableKeyPath<Output.State, Child.State?>, _ action: Child,
        in state: inout Output.State, dependencies: Dependencies,
        fileID: StaticString = #fileID, line: UInt = #line,
        send embed: @escaping @Sendable (Child.Output) -> Output
    ) -> Effect where Output: Sendable {
        ifLet(child, action, in: &state, dependencies: { $0 = dependencies }, fileID: fileID, line: line, send: embed)
    }
}

extension Effect {
    /// The effect `reduce` returns, reduced with the current dependencies changed by `change` (when
    /// given), and whose effects read them changed too.
    static func reduceChild(
        changing change: (@Sendable (inout Dependencies) -> Void)?, _ reduce: () -> Effect
    ) -> Effect {
        guard let change else { return reduce() }
        var dependencies = Dependencies.current
        change(&dependencies)
        return DependencyContext(dependencies).enter(reduce).changingDependencies(change)
    }

    /// This effect, whose parts that read the store's dependencies when they start read them changed by
    /// `change`.
    func changingDependencies(_ change: @escaping @Sendable (inout Dependencies) -> Void) -> Effect {
        switch kind {
        case .none, .send, .source, .cancel, .report:
            return self
        case .stream(let make):
            return Effect(.stream({ dependencies in
                var changed = dependencies
                change(&changed)
                return make(changed)
            }))
        case .run(let launch):
            return Effect(.run({ sink, dependencies, onError in
                var changed = dependencies
                change(&changed)
                return launch(sink, changed, onError)
            }))
        case .merge(let effects):
            return Effect(.merge(effects.map { $0.changingDependencies(change) }))
        case .concatenate(let effects):
            return Effect(.concatenate(effects.map { $0.changingDependencies(change) }))
        case .cancellable(let id, let cancelInFlight, let inner):
            return Effect(.cancellable(id, cancelInFlight: cancelInFlight, inner.changingDependencies(change)))
        case .child(let id, let presence, let inner):
            return Effect(.child(id, presence, inner.changingDependencies(change)))
        }
    }
}

/// The id of the collection a child feature lives in (a `forEach`'s array, an `ifLet`'s optional): the
/// children of one collection are tested together, in one pass over it.
struct ChildCollectionID: Hashable, Sendable {
    let path: ChildPath
}

/// How the store tells whether a child feature is still in its state.
///
/// The children that started effects are kept by collection: `collection` names it (nested under the
/// parent child's scope for a row of a row), `element` is the child's id in it (`0` for an `ifLet`).
/// `visit` walks the collection once in the state at `root`, whose type is `type`, and passes each id
/// present to `body` until `body` answers `true` (enough seen); it returns `false`, visiting nothing,
/// when the state is not of the type the feature was written for (an effect mapped into another store
/// by hand), and the store keeps those children then. The state is read where it lies, through the
/// pointer, never copied into an `Any`.
@usableFromInline
struct ChildPresence {
    @usableFromInline let collection: EffectID
    @usableFromInline let element: AnyHashable
    @usableFromInline let visit: ChildVisit

    init(collection: EffectID, element: AnyHashable, visit: @escaping ChildVisit) {
        self.collection = collection
        self.element = element
        self.visit = visit
    }
}

/// Walks the ids of one collection of children in the state at the pointer, of the given type; see
/// ``ChildPresence``.
@usableFromInline
typealias ChildVisit = (_ root: UnsafeRawPointer, _ type: Any.Type, _ body: (AnyHashable) -> Bool) -> Bool

/// Finds a child in the state at the pointer, of the given type, and runs `body` on the child's state
/// where it lies: `false` when the state is not of the type the feature was written for, `true` without
/// calling `body` when the child is gone, else what `body` returns.
typealias ChildLocator = (
    _ root: UnsafeRawPointer, _ type: Any.Type, _ body: (UnsafeRawPointer, Any.Type) -> Bool
) -> Bool

/// The id of a nested child's effects once lifted into its parent's parent: the parent's id and the
/// child's id under the parent, so that rows of two different parents with equal ids are told apart.
struct NestedChildEffectID: Hashable, Sendable {
    let parent: EffectID
    let child: EffectID
}

extension Effect {
    /// This effect, a child feature's, under the id `scope`, cancelled by the store once `presence` no
    /// longer finds the child in the store's state. The child features nested in it (rows of a row,
    /// which the child's own `forEach` or `ifLet` made, with presence tests on the child's state) are
    /// lifted to the same frame: each is tested in the child `locate` finds, and is gone with it, and its
    /// ids are made unique under `scope`. So a removal at any level cancels that element's effects.
    func asChild(_ scope: EffectID, _ presence: ChildPresence, locatedBy locate: @escaping ChildLocator) -> Effect {
        Effect(.child(scope, presence, liftingChildren(under: scope, locate)))
    }

    /// `id`, used in a child's effect, made that child's own under `scope` (unless it was made
    /// `acrossStore`).
    static func scoped(_ id: EffectID, under scope: EffectID) -> EffectID {
        id.acrossStore ? id : EffectID(NestedChildEffectID(parent: scope, child: id))
    }

    /// This effect with its cancel ids made the child's own under `scope`, and its nested children's
    /// presence tests run in the child `locate` finds.
    func liftingChildren(under scope: EffectID, _ locate: @escaping ChildLocator) -> Effect {
        switch kind {
        case .none, .send, .source, .stream, .run, .report:
            return self
        case .merge(let effects):
            return Effect(.merge(effects.map { $0.liftingChildren(under: scope, locate) }))
        case .concatenate(let effects):
            return Effect(.concatenate(effects.map { $0.liftingChildren(under: scope, locate) }))
        case .cancellable(let id, let cancelInFlight, let inner):
            return Effect(.cancellable(Self.scoped(id, under: scope), cancelInFlight: cancelInFlight,
                                       inner.liftingChildren(under: scope, locate)))
        case .cancel(let id):
            return Effect(.cancel(Self.scoped(id, under: scope)))
        case .child(let id, let presence, let inner):
            let visit = presence.visit
            let lifted = ChildPresence(
                collection: EffectID(NestedChildEffectID(parent: scope, child: presence.collection)),
                element: presence.element,
                visit: { root, type, body in locate(root, type) { child, childType in visit(child, childType, body) } })
            return Effect(.child(EffectID(NestedChildEffectID(parent: scope, child: id)), lifted,
                                 inner.liftingChildren(under: scope, locate)))
        }
    }
}
