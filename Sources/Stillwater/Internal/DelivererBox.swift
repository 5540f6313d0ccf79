/// The per-subscription state of an operator (the previous value of `distinctUntilChanged`, a count).
///
/// A captured `var` would be checked for exclusive access on every event; this box is touched only by the
/// source's deliveries, which never overlap, so the check is switched off.
@usableFromInline
final class DelivererBox<Value> {
    @usableFromInline @exclusivity(unchecked) var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
