import Synchronization

/// The concrete, type-erased stream that every operator returns.
///
/// An `Observable` is a recipe: it does nothing until subscribed, and each subscription runs the recipe
/// anew (a *cold* stream), unless it is built on a subject or shared with ``ObservableType/share(replay:)``.
///
/// ```swift
/// let numbers = Observable<Int>.of(1, 2, 3)
/// let subscription = numbers.map { $0 * 10 }.observe { print($0) }
/// // Prints "10", "20", "30"
/// ```
public struct Observable<Value>: ObservableType {
    /// The recipe, in the package's split form: values and the end reach the observer separately. `nil`
    /// stands for ``Subscription/empty``: nothing to cancel (a stream that ended while being subscribed,
    /// or `never`, which holds nothing), and it costs no reference counting to return.
    @usableFromInline
    let run: (Observer<Value>) -> Subscription?

    /// Creates a stream from a function that connects an observer and returns the subscription that
    /// disconnects it.
    ///
    /// The function runs once per subscriber. Custom operators can be built with this initialiser; user
    /// code usually prefers ``create(_:)``.
    @inlinable
    public init(_ subscribe: @escaping (@escaping (Event<Value>) -> Void) -> Subscription) {
        self.run = { observer in subscribe(observer.eventHandler) }
    }

    /// The split-form recipe, wrapped so that its initialiser never competes with the public one for a
    /// trailing closure.
    @usableFromInline
    struct Recipe {
        @usableFromInline let subscribe: (Observer<Value>) -> Subscription?

        @inlinable init(_ subscribe: @escaping (Observer<Value>) -> Subscription?) { self.subscribe = subscribe }
    }

    @inlinable
    init(recipe: Recipe) {
        self.run = recipe.subscribe
    }

    /// A stream from a recipe in the split form (the package's own operators and sources).
    @inlinable
    static func recipe(_ subscribe: @escaping (Observer<Value>) -> Subscription?) -> Observable {
        Observable(recipe: Recipe(subscribe))
    }

    /// Runs this stream's recipe for `observer`.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        run(Observer(observer)) ?? .empty
    }

    /// Runs this stream's recipe for `observer`, in the split form.
    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        run(observer) ?? .empty
    }

    /// Runs this stream's recipe for `observer`, in the split form; `nil` when it left nothing to cancel.
    /// That is not "ended": `never` returns `nil` too, so a caller learns of an end from the observer.
    /// For operators that subscribe often and keep the result only when there is one (the inner streams
    /// of `flatMapLatest`, `catch`).
    @inlinable
    func attach(_ observer: Observer<Value>) -> Subscription? {
        run(observer)
    }

    /// Returns `self`.
    @inlinable
    public func asObservable() -> Observable<Value> { self }
}

/// An `Observable` is `Sendable` when its `Value` is, so a view model that holds one
/// (`status: Observable<String>`) can be `Sendable` too.
///
/// Every source and operator of Stillwater is safe to subscribe to from any thread; a recipe of your own
/// (``init(_:)`` or ``create(_:)``) must be as well, as it is whenever it captures only `Sendable` things.
/// A stream of values that are not `Sendable` is not `Sendable` itself: the compiler keeps it, and the
/// values it hands out, on the isolation it was made in.
// @unchecked: an `Observable` is only its recipe, a closure that is not `@Sendable` (operators' recipes
// capture their upstream and transforms, which are not `@Sendable` either); the rule above is what makes
// sharing it safe.
extension Observable: @unchecked Sendable where Value: Sendable {}

extension Observable {
    /// A stream whose subscribers are handed an emitter to send events through.
    ///
    /// The emitter enforces the event grammar: after a terminal event, or after the subscription is
    /// cancelled, it ignores further calls. Return a ``Subscription`` that releases what the producer holds
    /// (or ``Subscription/empty``).
    ///
    /// ```swift
    /// let greetings = Observable<String>.create { emitter in
    ///     emitter.send("hi")
    ///     emitter.complete()
    ///     return .empty
    /// }
    /// let subscription = greetings.observe { print($0) }
    /// // Prints "hi"
    /// ```
    public static func create(_ produce: @escaping (Emitter<Value>) -> Subscription) -> Observable<Value> {
        Observable.recipe({ observer in
            let emitter = Emitter(observer.eventHandler)
            let subscription = Subscription(emitter)
            // Handed over before the producer runs, so an observer that has had enough while the producer
            // still sends (take) can stop it: see `Observer.early`.
            observer.early?.replace(with: subscription)
            emitter.producer.replace(with: produce(emitter))
            return subscription
        })
    }

    /// A stream that sends each of `values` in order, then completes.
    public static func of(_ values: Value...) -> Observable<Value> {
        from(values)
    }

    /// A stream that sends each element of `sequence` in order, then completes.
    public static func from<S: Sequence>(_ sequence: S) -> Observable<Value> where S.Element == Value {
        create { emitter in
            for value in sequence {
                guard emitter.isActive else { break }
                emitter.send(value)
            }
            emitter.complete()
            return .empty
        }
    }

    /// A stream that sends `value`, then completes.
    ///
    /// It sends both while it is being subscribed, straight to the observer (no emitter, nothing
    /// allocated but the returned subscription), so an inner stream of `flatMapLatest` or a fallback of
    /// `catch` made with it costs little. An observer that stops it through its early slot (`take`) after
    /// the value is not sent the completion.
    @inlinable
    public static func just(_ value: Value) -> Observable<Value> {
        Observable.recipe({ observer in
            observer.next(value)
            if observer.early?.isCancelled != true { observer.end(.completed) }
            return nil
        })
    }

    /// A stream that completes at once, without values.
    public static func empty() -> Observable<Value> {
        Observable.recipe({ observer in
            observer.end(.completed)
            return nil
        })
    }

    /// A stream that never sends anything.
    public static func never() -> Observable<Value> {
        Observable.recipe({ _ in nil })
    }

    /// A stream that fails at once with `error`.
    public static func failure(_ error: any Error) -> Observable<Value> {
        Observable.recipe({ observer in
            observer.end(.failed(error))
            return nil
        })
    }
}

/// The handle an ``Observable/create(_:)`` producer sends events through.
///
/// It keeps the event grammar: after `complete()`, `fail(_:)` or cancellation it ignores every call. It is
/// safe to call from any thread: calls are delivered one at a time, in the order they were made, and a
/// call made from inside the observer is delivered after the current event (never nested).
public final class Emitter<Value>: Cancellable, Sendable {
    private let serializer: Serializer<Event<Value>>
    private let active = Atomic<Bool>(true)
    /// What the producer returned; cancelled when the emitter ends or its subscriber leaves.
    let producer = SubscriptionSlot()

    init(_ observer: @escaping (Event<Value>) -> Void) {
        serializer = Serializer { event in
            observer(event)
            return !event.isTerminal
        }
        Resources.observerAdded()
    }

    /// Whether the emitter still forwards events (no terminal event yet, not cancelled).
    public var isActive: Bool { active.load(ordering: .acquiring) }

    /// Sends a value.
    public func send(_ value: Value) {
        guard isActive else { return }
        serializer.submit(.next(value))
    }

    /// Sends `completed` and stops.
    public func complete() {
        finish(.completed)
    }

    /// Sends `error(error)` and stops.
    public func fail(_ error: any Error) {
        finish(.error(error))
    }

    private func finish(_ event: Event<Value>) {
        guard active.exchange(false, ordering: .acquiringAndReleasing) else { return }
        serializer.submit(event)
        producer.cancel()
        Resources.observerRemoved()
    }

    /// Stops the emitter for its subscriber: later calls are ignored, events not yet delivered are
    /// dropped, and what the producer returned is cancelled.
    public func cancel() {
        producer.cancel()
        guard active.exchange(false, ordering: .acquiringAndReleasing) else { return }
        serializer.cancel()
        Resources.observerRemoved()
    }
}
