extension ObservableType {
    /// Hands every value of this stream to `target`, in order, until the stream ends or the binding is
    /// cancelled.
    ///
    /// The target is a relay, a ``MutableProperty``, an ``ActionHandle`` or a type of your own that
    /// conforms to ``BindingTarget``: a line of a terminal screen, a socket writer, a log.
    ///
    /// ```swift
    /// final class StatusLine: BindingTarget {
    ///     func accept(_ text: String) { print("status: \(text)") }
    /// }
    /// let status = PublishSubject<String>()
    /// let line = StatusLine()
    /// let binding = status.bind(to: line)
    /// status.send("connecting")
    /// status.send("online")
    /// status.complete()                   // ends the binding; the line is not told
    /// status.send("ignored")
    /// // Prints "status: connecting", "status: online"
    /// ```
    ///
    /// Each value reaches ``BindingTarget/accept(_:)`` on the thread that delivers it, one at a time.
    /// A terminal event (`completed` or `error`) ends the binding and is not passed on: the target has no
    /// end of its own, so a relay stays open and a property keeps its last value.
    ///
    /// To dispatch a stream of actions into a ``Store``, use ``bind(to:)-(Store<Self.Value.State>)``.
    ///
    /// - Returns: The binding's subscription; cancelling or releasing it ends the binding. The binding
    ///   keeps `target` alive until it ends, and releases it then.
    @inlinable
    public func bind<Target: BindingTarget>(to target: Target) -> Subscription where Target.Input == Value {
        observe { target.accept($0) }
    }
}

/// Something a stream's values can be bound into with ``ObservableType/bind(to:)-(Target)``.
///
/// ``PublishRelay``, ``BehaviorRelay``, ``MutableProperty`` and ``ActionHandle`` conform. Conform your own
/// types to send a stream's values where your program shows or sends them, without writing the
/// subscription by hand:
///
/// ```swift
/// // The line of a terminal screen that shows how many items are unread.
/// struct UnreadLine: BindingTarget {
///     let row: Int
///     func accept(_ count: Int) { print("row \(row): \(count) unread") }
/// }
/// let unread = BehaviorRelay(0)
/// let binding = unread.bind(to: UnreadLine(row: 2))
/// unread.accept(3)
/// // Prints "row 2: 0 unread", "row 2: 3 unread"
/// ```
///
/// What a conforming type can rely on:
/// - ``accept(_:)`` is called on the thread that delivers the stream's value, which may be any thread.
///   One binding calls it one value at a time, never twice at the same moment, in the stream's order.
///   Two bindings into one target are independent: when their streams deliver on different threads,
///   their calls may overlap, so a target bound more than once must be safe for that (the relays,
///   properties and handles of this package are).
/// - A terminal event of the stream ends the binding and never reaches the target: a target has no end.
/// - The binding holds the target strongly while it lasts and releases it when it ends (cancelled,
///   released, or its stream ended).
///
/// A ``Store`` takes actions of every type whose state is the store's, so it has no single ``Input`` and
/// does not conform; ``ObservableType/bind(to:)-(Store<Self.Value.State>)`` binds a stream of actions
/// into it.
public protocol BindingTarget<Input> {
    /// The type of the values the target takes.
    associatedtype Input

    /// Takes one value of a bound stream.
    ///
    /// Called on the delivering thread of the stream, one value at a time for each binding; see the
    /// protocol's description. It must not block for long: the stream's next value, and every other
    /// observer of its source, wait for it to return.
    func accept(_ input: Input)
}

/// A publish relay takes a bound value as if it were accepted: its observers receive it.
extension PublishRelay: BindingTarget {}

/// A behaviour relay takes a bound value as its new current value, and its observers receive it.
extension BehaviorRelay: BindingTarget {}
