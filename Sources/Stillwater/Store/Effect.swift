/// Work that an ``EffectAction`` asks its store to run after reducing it, whose results come back to the
/// store as actions of type `Output`.
///
/// An effect is a description: nothing runs until a store starts it, right after the reduce that returned
/// it (and after the new state reached the state's observers). Each action an effect sends is dispatched
/// to the store like any other: it passes through the middleware and is reduced in the order the effect
/// sends it.
///
/// ```swift
/// struct Search { var query = ""; var results: [String] = [] }
/// enum SearchAction: EffectAction {
///     case query(String), results([String])
///     func reduce(into state: inout Search) -> Effect<SearchAction> {
///         switch self {
///         case .query(let text):
///             state.query = text
///             return .stream(Observable.just(.results([text + "ui"])))
///         case .results(let found):
///             state.results = found
///             return .none
///         }
///     }
/// }
/// let store = Store(Search())
/// store.dispatch(SearchAction.query("swift"))
/// print(store.state.value.results)
/// // Prints "[\"swiftui\"]"
/// ```
///
/// Kinds of effect:
/// - ``none``: nothing to do.
/// - ``send(_:)``: one action, dispatched at once (queued behind the current one).
/// - `stream(_:)` (a stream, or a function of the dependencies making one): the values of a stream, as actions. A stream
///   that delivers synchronously costs no task and no lock.
/// - ``run(priority:_:catch:)``: an `async throws` operation on a task of its own, sending actions when
///   it likes.
/// - `merge(_:)`, `concatenate(_:)`: several effects at once, or one after another.
/// - ``cancellable(id:cancelInFlight:acrossStore:)`` and ``cancel(id:acrossStore:)``: cancellation by an
///   identifier, the feature's own (a row's, in a list of rows) unless said to be the store's.
///
/// Errors: an error a stream fails with, or that ``run(priority:_:catch:)`` throws without a `catch`
/// handler, goes to the store's `onEffectError` handler (see ``Store/init(_:dependencies:middleware:onEffectError:)``).
/// A `CancellationError` thrown by a cancelled `run` is not an error.
public struct Effect<Output> {
    /// Only `cancellable` is `indirect` (it holds an `Effect`): the other cases keep their payload in
    /// place, so making a `send` or a `stream` effect allocates no box.
    @usableFromInline
    enum Kind {
        case none
        case send(Output)
        case source(Observable<Output>)
        case stream((Dependencies) -> Observable<Output>)
        /// Starts the effect's task, which sends to the sink, hands errors it does not handle to
        /// `onError`, and tells the sink when it ended.
        case run((_ sink: any EffectSink<Output>, _ dependencies: Dependencies,
                  _ onError: @escaping @Sendable (any Error) -> Void) -> Task<Void, Never>)
        case merge([Effect])
        case concatenate([Effect])
        indirect case cancellable(EffectID, cancelInFlight: Bool, Effect)
        case cancel(EffectID)
        /// The effect of a child feature (``Effect/forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm``,
        /// ``Effect/ifLet(_:_:in:dependencies:fileID:line:send:)-zbc``): cancellable by the id, and cancelled
        /// by the store once `ChildPresence` no longer finds the child in the store's state.
        indirect case child(EffectID, ChildPresence, Effect)
        /// A mistake to hand to the store's `onEffectError` handler (a child action for a child that is
        /// gone).
        case report(any Error)
    }

    @usableFromInline let kind: Kind

    @usableFromInline
    init(_ kind: Kind) { self.kind = kind }

    /// No work: the store starts nothing.
    @inlinable
    public static var none: Effect { Effect(.none) }

    /// Whether this is ``none``.
    public var isNone: Bool {
        if case .none = kind { return true }
        return false
    }

    /// Dispatches `action` to the store as soon as the current action is done (it is queued behind the
    /// actions already waiting).
    public static func send(_ action: Output) -> Effect {
        Effect(.send(action))
    }

    /// Dispatches every value of `source` to the store, in order, until `source` ends.
    ///
    /// The store subscribes when the effect starts. Values delivered synchronously during that subscribe
    /// are queued and reduced after the current action, without a task or a lock. A failure of `source`
    /// goes to the store's `onEffectError` handler; to turn it into an action, end the stream with
    /// ``ObservableType/catch(_:)`` first.
    public static func stream<S: ObservableType>(_ source: S) -> Effect where S.Value == Output {
        Effect(.source(source.asObservable()))
    }

    /// Dispatches every value of the stream `makeSource` builds from the store's dependencies when the
    /// effect starts (to wait on `dependencies.scheduler`, or to call an injected client).
    ///
    /// ```swift
    /// enum Tick: EffectAction {
    ///     case start, fired
    ///     func reduce(into count: inout Int) -> Effect<Tick> {
    ///         switch self {
    ///         case .start:
    ///             return .stream { dependencies in
    ///                 Observable.timer(.seconds(1), scheduler: dependencies.scheduler).map { _ in Tick.fired }
    ///             }
    ///         case .fired:
    ///             count += 1
    ///             return .none
    ///         }
    ///     }
    /// }
    /// let scheduler = TestScheduler()
    /// let store = Store(0, dependencies: Dependencies { $0.scheduler = scheduler })
    /// store.dispatch(Tick.start)
    /// scheduler.advance(by: .seconds(1))
    /// print(store.state.value)
    /// // Prints "1"
    /// ```
    public static func stream<S: ObservableType>(
        _ makeSource: @escaping (_ dependencies: Dependencies) -> S
    ) -> Effect where S.Value == Output {
        Effect(.stream({ makeSource($0).asObservable() }))
    }

    /// Runs `operation` on a task of its own; it sends actions back with `send`.
    ///
    /// <!-- doc-test: waits for the effect's task to send its action -->
    /// ```swift
    /// enum Load: EffectAction {
    ///     case start, loaded(Int)
    ///     func reduce(into value: inout Int) -> Effect<Load> {
    ///         switch self {
    ///         case .start:
    ///             return .run { send, _ in send(.loaded(42)) }
    ///         case .loaded(let number):
    ///             value = number
    ///             print("loaded", number)
    ///             return .none
    ///         }
    ///     }
    /// }
    /// let store = Store(0)
    /// store.dispatch(Load.start)
    /// // from the effect's task:
    /// // Prints "loaded 42"
    /// ```
    ///
    /// - Parameters:
    ///   - priority: The task's priority; `nil` inherits the dispatching thread's.
    ///   - operation: The work. Cancelling the effect (by id, or by releasing the store) cancels its
    ///     task; actions sent after that are dropped.
    ///   - handler: Turns an error `operation` throws into actions. Without it, the error goes to the
    ///     store's `onEffectError` handler. An error thrown after the effect was cancelled (by id, or
    ///     because the store was released) is dropped, whatever its type.
    public static func run(
        priority: TaskPriority? = nil,
        _ operation: @escaping @Sendable (_ send: Send<Output>, _ dependencies: Dependencies) async throws -> Void,
        catch handler: (@Sendable (_ error: any Error, _ send: Send<Output>) async -> Void)? = nil
    ) -> Effect where Output: Sendable {
        Effect(.run({ sink, dependencies, onError in
            Task(executorPreference: dependencies.taskExecutor, priority: priority) {
                let send = Send<Output> { sink.send($0) }
                // What the operation calls (a child's reduce among them) reads the same dependencies.
                await DependencyContext.$task.withValue(DependencyContext(dependencies)) {
                    do {
                        try await operation(send, dependencies)
                    } catch {
                        // A cancelled effect's failure is moot (often it is the cancellation itself,
                        // whatever error type the operation turns it into): it is dropped.
                        if !Task.isCancelled {
                            if let handler { await handler(error, send) } else { onError(error) }
                        }
                    }
                }
                sink.end()
            }
        }))
    }

    /// Runs all of `effects` at once; their actions interleave as they are sent.
    public static func merge(_ effects: [Effect]) -> Effect {
        combining(effects, Kind.merge)
    }

    /// Runs all of `effects` at once; their actions interleave as they are sent.
    public static func merge(_ effects: Effect...) -> Effect {
        merge(effects)
    }

    /// This effect and `other` at once.
    public func merge(with other: Effect) -> Effect {
        .merge([self, other])
    }

    /// Runs `effects` one after another: each starts when the one before it has ended (completed, failed
    /// or been cancelled by its own id).
    public static func concatenate(_ effects: [Effect]) -> Effect {
        combining(effects, Kind.concatenate)
    }

    /// `effects` without the ``none``s, combined by `kind` when more than one is left.
    private static func combining(_ effects: [Effect], _ kind: ([Effect]) -> Kind) -> Effect {
        let live = effects.filter { !$0.isNone }
        switch live.count {
        case 0: return .none
        case 1: return live[0]
        default: return Effect(kind(live))
        }
    }

    /// Runs `effects` one after another: each starts when the one before it has ended.
    public static func concatenate(_ effects: Effect...) -> Effect {
        concatenate(effects)
    }

    /// This effect, then `next` when it has ended.
    public func concatenate(with next: Effect) -> Effect {
        .concatenate([self, next])
    }

    /// This effect, made cancellable by ``cancel(id:acrossStore:)`` with `id`.
    ///
    /// Once a cancel of `id` has been reduced, the store reduces no action this effect sends, even one
    /// sent before the cancel and still waiting in the store's queue; its stream is unsubscribed and its
    /// task cancelled.
    ///
    /// An id belongs to the feature whose reduce returned the effect: in a child feature (a row of
    /// ``forEach(_:id:_:in:dependencies:fileID:line:send:)-ezkm``, the child of
    /// ``ifLet(_:_:in:dependencies:fileID:line:send:)-zbc``), it is that element's own, so two rows that both
    /// save under `"save"` with `cancelInFlight` never cancel each other, and a row's
    /// ``cancel(id:acrossStore:)`` reaches only its own effects. Pass `acrossStore: true` for an id the
    /// whole store shares, whichever feature starts or cancels it.
    ///
    /// ```swift
    /// struct Row: Identifiable, Equatable { var id: Int; var saves = 0 }
    /// enum RowAction: EffectAction {
    ///     case save, saved
    ///     func reduce(into row: inout Row) -> Effect<RowAction> {
    ///         switch self {
    ///         case .save:
    ///             return .run { send, _ in send(.saved) }.cancellable(id: "save", cancelInFlight: true)
    ///         case .saved:
    ///             row.saves += 1
    ///             return .none
    ///         }
    ///     }
    /// }
    /// enum ListAction: EffectAction {
    ///     case row(Int, RowAction)
    ///     func reduce(into rows: inout [Row]) -> Effect<ListAction> {
    ///         guard case .row(let id, let action) = self else { return .none }
    ///         return .forEach(\.self, id: id, action, in: &rows) { .row(id, $0) }
    ///     }
    /// }
    /// let store = Store([Row(id: 1), Row(id: 2)])
    /// let first = store.dispatch(ListAction.row(1, .save))
    /// let second = store.dispatch(ListAction.row(2, .save))     // does not cancel row 1's save
    /// await first.finish()
    /// await second.finish()
    /// print(store.state.value.map(\.saves))
    /// // Prints "[1, 1]"
    /// ```
    ///
    /// - Parameters:
    ///   - id: Any hashable value; effects share an id when their ids are equal as `AnyHashable` values
    ///     are: `1` and `1 as Int8` are one id, `1` and `"1"` are two.
    ///   - cancelInFlight: When `true`, starting this effect first cancels the effects already running
    ///     under `id` (a search that replaces the one before it).
    ///   - acrossStore: When `true`, `id` is the store's, not the feature's: a cancel of it from any
    ///     feature of the store, with `acrossStore: true` there too (or from the top-level feature),
    ///     reaches this effect. At the top level the two are the same.
    public func cancellable(
        id: some Hashable & Sendable, cancelInFlight: Bool = false, acrossStore: Bool = false
    ) -> Effect {
        if isNone && !cancelInFlight { return self }
        return Effect(.cancellable(EffectID(id, acrossStore: acrossStore), cancelInFlight: cancelInFlight, self))
    }

    /// Cancels the running effects made ``cancellable(id:cancelInFlight:acrossStore:)`` with `id`; none of
    /// their actions is reduced after this effect's action.
    ///
    /// - Parameters:
    ///   - id: The id, as given to `cancellable`.
    ///   - acrossStore: When `false` (the default), the id of the feature whose reduce returned this
    ///     effect (a row's own, in a child feature); when `true`, the store's (see
    ///     ``cancellable(id:cancelInFlight:acrossStore:)``).
    public static func cancel(id: some Hashable & Sendable, acrossStore: Bool = false) -> Effect {
        Effect(.cancel(EffectID(id, acrossStore: acrossStore)))
    }

    /// This effect with each action it sends changed by `transform`, for a feature's effects embedded in
    /// a larger feature's actions.
    public func map<T>(_ transform: @escaping @Sendable (Output) -> T) -> Effect<T> {
        switch kind {
        case .none: return .none
        case .send(let action): return Effect<T>(.send(transform(action)))
        case .source(let source): return Effect<T>(.source(source.map(transform)))
        case .stream(let make): return Effect<T>(.stream({ make($0).map(transform) }))
        case .run(let launch):
            return Effect<T>(.run({ sink, dependencies, onError in
                launch(MappedSink(sink, transform), dependencies, onError)
            }))
        case .merge(let effects): return Effect<T>(.merge(effects.map { $0.map(transform) }))
        case .concatenate(let effects): return Effect<T>(.concatenate(effects.map { $0.map(transform) }))
        case .cancellable(let id, let cancelInFlight, let effect):
            return Effect<T>(.cancellable(id, cancelInFlight: cancelInFlight, effect.map(transform)))
        case .cancel(let id): return Effect<T>(.cancel(id))
        case .child(let id, let presence, let effect): return Effect<T>(.child(id, presence, effect.map(transform)))
        case .report(let error): return Effect<T>(.report(error))
        }
    }
}

/// The identifier of cancellable effects: the hashable value given to ``Effect/cancellable(id:cancelInFlight:)``,
/// compared as `AnyHashable` compares (so `1` and `1 as Int8` are one id).
///
/// The value sits in a box: `AnyHashable`'s layout is not known to the compiler (the standard library
/// can change it), and held in place it would make every `Effect` a value of unknown layout, which is
/// copied and destroyed through runtime calls instead of a few instructions.
@usableFromInline
struct EffectID: Hashable, Sendable {
    /// The value, kept `Sendable`; compared and hashed as an `AnyHashable` of it.
    @usableFromInline
    final class Box: Sendable {
        let value: any Hashable & Sendable
        init(_ value: any Hashable & Sendable) { self.value = value }
    }

    let box: Box
    /// Whether the id is the store's rather than the feature's: a child feature's lifting leaves it as
    /// it is (see ``Effect/scoped(_:under:)``). Not part of the id's identity: at the top level, where
    /// nothing is lifted, `"save"` and `"save"` across the store are one id.
    let acrossStore: Bool

    init(_ value: some Hashable & Sendable, acrossStore: Bool = false) {
        box = Box(value)
        self.acrossStore = acrossStore
    }

    @usableFromInline
    static func == (lhs: EffectID, rhs: EffectID) -> Bool {
        lhs.box === rhs.box || AnyHashable(lhs.box.value) == AnyHashable(rhs.box.value)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(AnyHashable(box.value))
    }
}

/// Sends actions from an ``Effect/run(priority:_:catch:)`` effect back to its store.
///
/// Call it like a function: `send(.loaded(data))`. Safe from any task or thread. An action sent after
/// the effect was cancelled (by id, or because the store was released) is dropped, and so is one sent
/// after the effect's operation returned: a callback that outlives the operation must be awaited inside
/// it (for example with `for await` over its values), not handed `send` to call later.
public struct Send<Output>: Sendable {
    let body: @Sendable (Output) -> Void

    /// A `Send` that hands each action to `body` (for tests of an effect's operation on its own).
    public init(_ body: @escaping @Sendable (Output) -> Void) {
        self.body = body
    }

    /// Dispatches `action` to the effect's store.
    public func callAsFunction(_ action: Output) {
        body(action)
    }

}

/// Where a running effect's task sends its actions, and says that it ended.
@usableFromInline
protocol EffectSink<Output>: Sendable {
    associatedtype Output
    func send(_ action: Output)
    func end()
}

/// A sink of a mapped effect: changes each action, then sends it on.
final class MappedSink<Source, Target>: EffectSink, Sendable {
    let base: any EffectSink<Target>
    let transform: @Sendable (Source) -> Target

    init(_ base: any EffectSink<Target>, _ transform: @escaping @Sendable (Source) -> Target) {
        self.base = base
        self.transform = transform
    }

    func send(_ action: Source) { base.send(transform(action)) }
    func end() { base.end() }
}
