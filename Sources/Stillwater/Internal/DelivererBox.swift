/// The per-subscription state of an operator (the previous value of `distinctUntilChanged`, a count, a
/// `combineLatest`'s latest values).
///
/// A captured `var` would be checked for exclusive access on every event; this box is touched only by the
/// deliveries of the one source or serializer it belongs to, which never overlap, so the check is
/// switched off.
// @unchecked Sendable: `value` is read and written only by the thread delivering for the box's source or
// serializer (the engine's ownership rule, Internal/README.md "Who owns what"), never by two at once. The
// operator nodes that keep their state in such boxes are then checked `Sendable`.
@usableFromInline final class DelivererBox<Value>: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked) var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
