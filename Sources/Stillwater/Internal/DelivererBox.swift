/// The per-subscription state of an operator (the previous value of `distinctUntilChanged`, a count, a
/// `combineLatest`'s latest values).
///
/// A captured `var` would be checked for exclusive access on every event; this box is touched only by the
/// deliveries of the one source or serializer it belongs to, which never overlap, so the check is
/// switched off.
///
/// Not `Sendable`: `value` is read and written only by the thread delivering for the box's source or
/// serializer (the engine's ownership rule, Internal/README.md "Who owns what"), never by two at once, and
/// the box reaches that thread only inside its operator's observer and subscription. The operator nodes
/// that keep their state in such boxes are not `Sendable` either.
@usableFromInline final class DelivererBox<Value> {
    @usableFromInline @exclusivity(unchecked) var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
