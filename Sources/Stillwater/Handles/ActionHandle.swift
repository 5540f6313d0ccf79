/// A callback with a stable identity: a child calls it like a function, and its parent observes it like a
/// stream.
///
/// A closure passed down to a child cannot be compared, so a value holding one can never be `Equatable`,
/// and a child whose inputs hold a closure looks changed every time its parent rebuilds. A handle is an
/// object that is equal only to itself: a struct holding one keeps its synthesized `Equatable`, and
/// yesterday's inputs compare equal to today's when nothing else changed.
///
/// ```swift
/// struct RowProps: Equatable {          // synthesized: ActionHandle is Equatable
///     var title: String
///     var onTap: ActionHandle<Void>
/// }
/// let onTap = ActionHandle<Void>()
/// let parent = onTap.observe { print("tapped") }
/// let props = RowProps(title: "Milk", onTap: onTap)
/// print(props == RowProps(title: "Milk", onTap: onTap))
/// props.onTap()                         // the child calls it like a function
/// // Prints "true", "tapped"
/// ```
///
/// A handle is a hot source like ``PublishRelay``: each observer receives the calls made after it
/// subscribed, and the stream never ends. Every operator works on it, so a parent turns calls into
/// actions with `handle.map { TodoAction.toggle($0) }`.
///
/// Calling a handle is safe from any thread and any task at once. Observers receive the calls one at a
/// time, all in the same order; a call made while a delivery is in progress (on another thread, or from
/// inside an observer) is queued and delivered after the current call has reached every observer, never
/// nested. Calling a handle that nobody observes does nothing: the parameter is neither delivered later
/// nor kept.
///
/// A handle holds its observers' closures, not the other way round: cancelling (or releasing) an
/// observer's subscription releases what its closure captured, even while the handle lives on. While a
/// subscription is active, a child holding the handle keeps alive what the parent's observer captured;
/// a parent that owns both the handle and the subscription should capture itself weakly
/// (`[weak self]`) in the observer, or cancel the subscription when it goes away.
///
/// - Complexity: A call costs one compare-and-swap to start delivering and one to finish, plus one call
///   per observer; it allocates nothing.
/// - Note: The handle is `Sendable` when its `Parameter` is (`ActionHandle<Void>`, `ActionHandle<Int>`,
///   a handle of a `Sendable` struct), so a value holding it can cross into a task or another actor.
///   A handle of a parameter that is not `Sendable` is not `Sendable` either, and the compiler keeps it
///   in one isolation domain: a call's parameter may be delivered on the thread of a concurrent caller
///   that is already delivering, which would share the parameter between threads.
public final class ActionHandle<Parameter>: ObservableType, Hashable {
    @usableFromInline let core = SourceCore<Parameter>(.none)

    /// Creates a handle with no observers; it is equal only to itself.
    public init() {}

    /// Delivers `parameter` to every current observer; does nothing when nobody observes the handle.
    ///
    /// ```swift
    /// let onSelect = ActionHandle<Int>()
    /// let subscription = onSelect.observe { print("selected \($0)") }
    /// onSelect(3)
    /// // Prints "selected 3"
    /// ```
    @inlinable
    public func callAsFunction(_ parameter: Parameter) {
        core.send(.next(parameter))
    }

    /// Registers `observer` for the calls made from now on. It never receives a terminal event.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Parameter>) -> Void) -> Subscription {
        core.subscribe(observer)
    }

    /// This handle as an ``Observable`` that subscribes straight to it: operators built on it hand each
    /// value to their stage directly, with no event closure in between.
    @inlinable
    public func asObservable() -> Observable<Parameter> {
        core.observable
    }

    /// Whether `lhs` and `rhs` are the same handle. Two handles created separately are never equal.
    @inlinable
    public static func == (lhs: ActionHandle, rhs: ActionHandle) -> Bool {
        lhs === rhs
    }

    /// Hashes the handle's identity.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// A handle is `Sendable` when its parameter is: its calls hand the parameter to whichever thread
/// delivers, so only a `Sendable` parameter may come from another isolation domain.
extension ActionHandle: Sendable where Parameter: Sendable {}

extension ActionHandle where Parameter == Void {
    /// Calls the handle: `onTap()` instead of `onTap(())`.
    ///
    /// ```swift
    /// let onTap = ActionHandle<Void>()
    /// let subscription = onTap.observe { print("tap") }
    /// onTap()
    /// // Prints "tap"
    /// ```
    @inlinable
    public func callAsFunction() {
        callAsFunction(())
    }
}

extension ActionHandle: BindingTarget {
    /// Calls the handle with `parameter`: what ``ObservableType/bind(to:)-(Target)`` does with each value
    /// of a stream bound into the handle.
    ///
    /// ```swift
    /// let keys = PublishSubject<Int>()
    /// let onSelect = ActionHandle<Int>()
    /// let printing = onSelect.observe { print("selected \($0)") }
    /// let binding = keys.bind(to: onSelect)
    /// keys.send(2)
    /// // Prints "selected 2"
    /// ```
    @inlinable
    public func accept(_ parameter: Parameter) {
        callAsFunction(parameter)
    }
}
