/// The paths of a ``SourceCore`` that only a store's state takes (``ReplayPolicy/storeState``).
///
/// A store reduces each action as its state's deliverer: `Store.dispatch` wins the core's queue (or
/// queues a ``SourceCore/Work/perform(_:)`` item that the deliverer runs in turn), then calls
/// ``SourceCore/modifyAndDeliverOwned(_:)``, which changes the state in place under `retained` and
/// delivers it. Because only the deliverer writes, an observer that waited in the queue is handed the
/// state as it is when it is added (its `replay` is read then, not when it asked).
extension SourceCore {
    /// What a store's action is told when its `reduce` touches the store's state.
    @usableFromInline
    static var storeReentered: StaticString {
        "Stillwater: an Action's reduce read its own store (state.value, a scope's or select's value, or a new scope) while the store was reducing it. reduce runs under the store's lock: read what it needs from its inout state and from the action, and dispatch follow-up actions from an observer or a DynamicAction."
    }

    /// Changes the current value in place with `body` and delivers the result. Deliverer only: the caller
    /// won ``DeliveryQueue/tryAcquire()`` or runs inside a ``Work/perform(_:)`` item, so no other write
    /// and no other delivery can come between the change and its delivery.
    ///
    /// Observers with an ``InPlaceReader`` (a store's scopes) read the new value where it lies, under the
    /// lock, and deliver their slice after it; the others receive one copy, made only if there are any.
    @inlinable @inline(__always)
    func modifyAndDeliverOwned(_ body: (inout Value) -> Void) {
        checkOwned()
        let copy: Value? = withRetained { retained in
            withUnsafeMutablePointer(to: &retained.replay.newest) { value in
                body(&value.pointee)
                guard !isStopped else { return nil }
                var needsCopy = false
                observers.members.forEach { box in
                    if !box.isCancelled, !box.prepare(UnsafeRawPointer(value)) { needsCopy = true }
                }
                return needsCopy ? value.pointee : nil
            }
        }
        guard !isStopped else { return }
        if let copy {
            observers.members.forEach { box in
                if !box.isCancelled { box.flush(orDeliver: copy) }
            }
        } else {
            observers.members.forEach { box in
                if !box.isCancelled { box.flush() }
            }
        }
    }
}
