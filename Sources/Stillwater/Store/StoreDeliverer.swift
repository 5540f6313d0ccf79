/// What only a store's deliverer touches: the thread that won the state's queue (see the engine article,
/// `Internal/README.md`), while it reduces an action and starts its effects.
///
/// One value, held by the store's ``EffectRuntime`` and reached only through ``Store/deliverer``, whose
/// debug check stops any other thread with ``Store/delivererRule``. Its steps (``token(for:)``,
/// ``lastingGroup(_:)``, ``addChild(_:under:)``) change it and return what the store then does; none
/// calls out, so no access to it is ever held across user code.
@usableFromInline
struct StoreDeliverer {
    /// Whether effects are dropped: set around a replayed action (``History/replay(_:into:)``), whose
    /// effects' actions were recorded themselves.
    @usableFromInline var suppressesEffects = false
    /// How many more levels of actions sent by effects during their start may be reduced right after
    /// that start instead of being queued; 0 (queue them) unless the action being reduced came through
    /// `dispatchAny` or ``Store/dispatch(_:)-(E)`` with nothing queued and no middleware. So it is
    /// positive only where no ``effectGroup`` is current (none is set before the queue's work runs, after
    /// it is reset to 0).
    @usableFromInline var inlineBudget = 0
    /// The sink of the last stream effect that ended during its start, kept for the next one (see
    /// `Store.startStreamHoldingOne`).
    @usableFromInline var spareSink: EffectRecord?
    /// The ``StoreTask`` group of the effects started now, or whether they belong to the dispatch in
    /// progress (whose group is ``rootGroup``, made late); `nil` and `false` outside both.
    @usableFromInline var effectGroup: EffectGroup?
    @usableFromInline var effectGroupIsRoot = false
    /// The group of the dispatch in progress, made when its first effect outlives its start.
    @usableFromInline var rootGroup: EffectGroup?
    /// The child features (rows of a `forEach`, an `ifLet`) that started effects, by the collection they
    /// live in (see ``ChildPresence``). Empty for a store without child features, which then tests
    /// nothing after a reduce.
    @usableFromInline var childScopes: [EffectID: ChildGroup] = [:]
    /// Whether ``childScopes`` holds any: what a store tests after every reduce, one byte (a dictionary's
    /// emptiness costs two loads more, on every plain dispatch).
    @usableFromInline var hasChildren = false
    /// The current token of each id that effects still hold (weakly: a token nothing holds any more is
    /// dropped, so the table does not grow with every id ever used), and the table's size at which its
    /// dead entries are swept next.
    @usableFromInline var tokens: [EffectID: WeakToken] = [:]
    @usableFromInline var sweepSize = 64
    /// Whether the runtime's weak reference to the store was formed (``EffectRuntime/link(_:)``).
    @usableFromInline var isLinked = false

    @usableFromInline
    init() {}

    /// The token a new effect cancellable with `id` holds: the current one of `id`, or a new one.
    @usableFromInline
    mutating func token(for id: EffectID) -> CancelToken {
        if let token = tokens[id]?.token { return token }
        let token = CancelToken(id)
        tokens[id] = WeakToken(token: token)
        if tokens.count >= sweepSize {
            tokens = tokens.filter { $0.value.token != nil }
            sweepSize = max(64, tokens.count * 2)
        }
        return token
    }

    /// The group of the effects started now, made at once (with `makeGroup`) if they belong to the
    /// dispatch in progress (its ``rootGroup``): for a record about to outlive its start, or a
    /// concatenation whose later children start after the dispatch.
    @inlinable
    mutating func lastingGroup(_ makeGroup: () -> EffectGroup) -> EffectGroup? {
        guard effectGroupIsRoot else { return effectGroup }
        if let rootGroup { return rootGroup }
        let group = makeGroup()
        rootGroup = group
        return group
    }

    /// Records that the child `presence` names started effects under `id`, unless it is known already.
    @usableFromInline
    mutating func addChild(_ presence: ChildPresence, under id: EffectID) {
        guard childScopes[presence.collection]?.members[presence.element] == nil else { return }
        childScopes[presence.collection, default: ChildGroup(visit: presence.visit)].members[presence.element] = id
        hasChildren = true
    }

    /// Forgets the children among `departed` (by collection) and returns the ids their effects ran under,
    /// for the store to cancel.
    @usableFromInline
    mutating func removeChildren(_ departed: [(collection: EffectID, elements: [AnyHashable])]) -> [EffectID] {
        var ids: [EffectID] = []
        for (collection, elements) in departed {
            for element in elements {
                if let id = childScopes[collection]?.members.removeValue(forKey: element) { ids.append(id) }
            }
            if childScopes[collection]?.members.isEmpty == true { childScopes[collection] = nil }
        }
        hasChildren = !childScopes.isEmpty
        return ids
    }
}
