import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

extension Tally {
    /// A computed slice: a scope of it cannot read at a stored offset and takes the key path's own road.
    var isEven: Bool { count % 2 == 0 }
}

/// A store's scopes run on the store's own queue and read their slice of each new state where it lies.
@Suite("Store scopes")
struct StoreScopeTests {
    @Test("observers of the state and of its scopes are told in subscription order, one action at a time")
    func subscriptionOrder() {
        let store = Store(Tally())
        let log = Mutex<[String]>([])
        let first = store.state.observe { state in log.withLock { $0.append("state \(state.count)") } }
        let count = store.scope(\.count).observe { count in log.withLock { $0.append("count \(count)") } }
        let parity = store.scope(\.isEven).observe { even in log.withLock { $0.append("even \(even)") } }
        let last = store.state.observe { state in log.withLock { $0.append("last \(state.count)") } }
        log.withLock { $0.removeAll() }

        store.dispatch(TallyAction.increment)
        store.dispatch(TallyAction.rename("y"))
        store.dispatch(TallyAction.increment)

        #expect(log.withLock { $0 } == [
            "state 1", "count 1", "even false", "last 1",
            "state 1", "last 1",
            "state 2", "count 2", "even true", "last 2",
        ])
        _ = (first, count, parity, last)
    }

    @Test("an action dispatched by a state or scope observer is reduced after every observer saw the state before it")
    func reentrantDispatch() {
        let store = Store(Tally())
        let log = Mutex<[String]>([])
        let state = store.state.observe { state in
            log.withLock { $0.append("state \(state.count) reads \(store.state.value.count)") }
            if state.count == 1 { store.dispatch(TallyAction.increment) }
        }
        let scope = store.scope(\.count).observe { count in
            log.withLock { $0.append("scope \(count) reads \(store.state.value.count)") }
            if count == 2 { store.dispatch(TallyAction.increment) }
        }
        let last = store.state.observe { state in
            log.withLock { $0.append("last \(state.count) reads \(store.state.value.count)") }
        }
        log.withLock { $0.removeAll() }
        store.dispatch(TallyAction.increment)
        #expect(log.withLock { $0 } == [
            "state 1 reads 1", "scope 1 reads 1", "last 1 reads 1",
            "state 2 reads 2", "scope 2 reads 2", "last 2 reads 2",
            "state 3 reads 3", "scope 3 reads 3", "last 3 reads 3",
        ])
        _ = (state, scope, last)
    }

    @Test("a scope of a scope of a store is told only when its own slice changed")
    func nestedScope() {
        let store = Store(Tally())
        let lengths = Recorder(store.scope(\.items).scope(\.count))
        store.dispatch(TallyAction.append("a"))
        store.dispatch(TallyAction.increment)
        store.dispatch(TallyAction.append("b"))
        #expect(lengths.values == [0, 1, 2])
    }

    @Test("a scope subscribed from inside an observer gets the current slice, then each change once")
    func subscribeDuringDelivery() {
        let store = Store(Tally())
        let seen = Mutex<[Int]>([])
        let late = Mutex<Subscription?>(nil)
        let trigger = store.state.observe { state in
            guard state.count == 1 else { return }
            let subscription = store.scope(\.count).observe { count in seen.withLock { $0.append(count) } }
            late.withLock { $0 = subscription }
        }
        store.dispatch(TallyAction.increment)
        store.dispatch(TallyAction.increment)
        store.dispatch(TallyAction.increment)
        #expect(seen.withLock { $0 } == [1, 2, 3])
        _ = trigger
    }

    @Test("a scope subscriber queued behind a queued action receives the slice after it, and misses nothing")
    func scopeSubscriberQueuedBehindAction() {
        let log = queuedSubscriberLog { store, told in store.scope(\.count).observe(told) }
        #expect(log == QueuedSubscriberLog(
            beforeRelease: [], afterRelease: ["2 reads 2"], afterNextAction: ["2 reads 2", "3 reads 3"]
        ))
    }

    @Test("scope observers read the state they are told of, while other threads dispatch and subscribe to the scope")
    func scopeReadsWhatIsDelivered() async {
        let store = Store(Tally())
        let mismatches = AtomicCounter()
        let deliveries = AtomicCounter()
        let watcher = store.scope(\.count).observe { count in
            deliveries.increment()
            if store.state.value.count != count { mismatches.increment() }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<5_000 { store.dispatch(TallyAction.increment) }
                }
            }
            group.addTask {
                for _ in 0..<2_000 {
                    // A late subscriber of the scope misses nothing and sees nothing twice.
                    let last = Mutex<Int?>(nil)
                    let churn = store.scope(\.count).observe { count in
                        let previous = last.withLock { last in
                            defer { last = count }
                            return last
                        }
                        if let previous, count != previous + 1 { mismatches.increment() }
                        if store.state.value.count != count { mismatches.increment() }
                    }
                    churn.cancel()
                }
            }
        }
        watcher.cancel()
        #expect(store.state.value.count == 15_000)
        #expect(deliveries.value == 15_001)
        #expect(mismatches.value == 0)
    }
}
