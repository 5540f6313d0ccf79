import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Store")
struct StoreTests {
    @Test("enum and struct actions reduce the state in dispatch order")
    func reducesActions() {
        let store = Store(Tally())
        store.dispatch(TallyAction.increment)
        store.dispatch(Increment(by: 5))
        store.dispatch(TallyAction.rename("y"))
        #expect(store.state.value.count == 6)
        #expect(store.state.value.name == "y")
    }

    @Test("observers get the current state first, then every new state")
    func observersSeeEveryState() {
        let store = Store(Tally())
        let recorder = Recorder(store.state.map(\.count))
        store.dispatch(TallyAction.increment)
        store.dispatch(TallyAction.increment)
        #expect(recorder.values == [0, 1, 2])
        let direct = Recorder(store.map(\.count))
        #expect(direct.values == [2])
    }

    @Test("a dynamic action reads the state, dispatches actions and returns its response")
    func dynamicAction() {
        struct IncrementIfBelow: DynamicAction {
            let limit: Int
            func call(_ store: Store<Tally>) -> Bool {
                guard store.state.value.count < limit else { return false }
                store.dispatch(TallyAction.increment)
                return true
            }
        }
        let store = Store(Tally())
        #expect(store.dispatch(IncrementIfBelow(limit: 2)))
        #expect(store.dispatch(IncrementIfBelow(limit: 2)))
        #expect(!store.dispatch(IncrementIfBelow(limit: 2)))
        #expect(store.state.value.count == 2)
    }

    @Test("a scoped observer of a is not called when an action changes only b")
    func scopeSkipsOtherParts() {
        let store = Store(Tally())
        let a = Recorder(store.scope(\.a))
        let b = Recorder(store.scope(\.b))
        store.dispatch(TallyAction.setB(1))
        store.dispatch(TallyAction.setB(2))
        store.dispatch(TallyAction.setA(7))
        store.dispatch(TallyAction.setA(7))
        #expect(a.values == [0, 7])
        #expect(b.values == [0, 1, 2])
    }

    @Test("scopes of one key path share one node, like a property's scopes")
    func scopesAreShared() {
        let store = Store(Tally())
        let first = store.scope(\.count)
        let second = store.scope(\.count)
        #expect(first.storage === second.storage)
    }

    @Test("four threads of 10 000 increments end at 40 000, and an observer sees a strictly increasing sequence")
    func concurrentDispatch() async {
        let store = Store(Tally())
        let seen = Shared<[Int]>([])
        let whole = Shared<[Int]>([])
        let overlaps = OverlapDetector()
        let subscription = store.scope(\.count).observe { count in
            overlaps.enter { seen.value.append(count) }
        }
        let wholeSubscription = store.state.observe { state in
            overlaps.enter { whole.value.append(state.count) }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<10_000 { store.dispatch(TallyAction.increment) }
                }
            }
        }
        subscription.cancel()
        wholeSubscription.cancel()
        #expect(store.state.value.count == 40_000)
        #expect(overlaps.overlaps == 0)
        // Every state, in order: strictly increasing, and none skipped.
        #expect(seen.value == Array(0...40_000))
        #expect(whole.value == Array(0...40_000))
    }

    @Test("observers read the state they are told of, while other threads dispatch, subscribe and cancel")
    func stateReadsWhatIsDelivered() async {
        let store = Store(Tally())
        let mismatches = AtomicCounter()
        let deliveries = AtomicCounter()
        let watcher = store.state.observe { state in
            deliveries.increment()
            if store.state.value.count != state.count { mismatches.increment() }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<5_000 { store.dispatch(TallyAction.increment) }
                }
            }
            group.addTask {
                for _ in 0..<2_000 {
                    // A late subscriber misses nothing: each state it sees follows the one before.
                    let last = Mutex<Int?>(nil)
                    let churn = store.state.observe { state in
                        let previous = last.withLock { last in
                            defer { last = state.count }
                            return last
                        }
                        if let previous, state.count != previous + 1 { mismatches.increment() }
                        if store.state.value.count != state.count { mismatches.increment() }
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

    @Test("a subscriber queued behind a queued action receives the state after it, and misses nothing")
    func subscriberQueuedBehindAction() {
        let log = queuedSubscriberLog { store, told in store.state.observe { told($0.count) } }
        #expect(log == QueuedSubscriberLog(
            beforeRelease: [], afterRelease: ["2 reads 2"], afterNextAction: ["2 reads 2", "3 reads 3"]
        ))
    }

    @Test("an action dispatched by an observer is reduced after every observer saw the state before it")
    func reentrantDispatchFromObserver() {
        let store = Store(Tally())
        let log = Shared<[String]>([])
        let first = store.state.observe { state in
            log.value.append("A \(state.count) reads \(store.state.value.count)")
            if state.count == 1 { store.dispatch(TallyAction.increment) }
        }
        let second = store.state.observe { state in
            log.value.append("B \(state.count) reads \(store.state.value.count)")
        }
        store.dispatch(TallyAction.increment)
        #expect(log.value == [
            "A 0 reads 0", "B 0 reads 0",
            "A 1 reads 1", "B 1 reads 1",
            "A 2 reads 2", "B 2 reads 2",
        ])
        _ = (first, second)
    }

    @Test("a dynamic action called from an observer queues its actions behind the current state")
    func reentrantDynamicAction() {
        struct Double: DynamicAction {
            func call(_ store: Store<Tally>) -> Int {
                store.dispatch(TallyAction.add(store.state.value.count))
                return store.state.value.count
            }
        }
        let store = Store(Tally(count: 1))
        let responses = Shared<[Int]>([])
        let seen = Recorder(store.scope(\.count))
        let subscription = store.scope(\.count).changes.observe { count in
            if count < 8 { responses.value.append(store.dispatch(Double())) }
        }
        store.dispatch(TallyAction.increment)
        // 1 -> 2 (increment), then each observed state doubles until 8.
        #expect(seen.values == [1, 2, 4, 8])
        // Inside an observer the dispatch is queued, so the response still reads the state being delivered.
        #expect(responses.value == [2, 4])
        subscription.cancel()
    }

    @Test("a long chain of dispatches from observers does not grow the stack")
    func noStackGrowth() {
        let store = Store(Tally())
        var spread = StackSpread()
        let subscription = store.scope(\.count).observe { count in
            spread.sample()
            if count < 10_000 { store.dispatch(TallyAction.increment) }
        }
        #expect(store.state.value.count == 10_000)
        #expect(spread.samples == 10_001)
        #expect(spread.spread < 4096)
        subscription.cancel()
    }

    @Test("an action dispatched after the last observer left is still reduced")
    func dispatchWithoutObservers() {
        let store = Store(Tally())
        let subscription = store.state.observe { _ in }
        subscription.cancel()
        store.dispatch(TallyAction.increment)
        #expect(store.state.value.count == 1)
    }

    @Test("a store, its scopes and its middleware are freed when the last reference and subscription go")
    func memory() {
        weak var weakStore: Store<Tally>?
        weak var weakCaptured: Token?
        weak var weakScope: Property<Int>?
        do {
            let captured = Token()
            weakCaptured = captured
            let middleware = Middleware<Tally> { _, action, next in
                _ = captured
                next(action)
            }
            let store = Store(Tally(), middleware: [middleware, .logging(printer: { _ in })])
            weakStore = store
            let scope = store.scope(\.count)
            weakScope = scope
            let subscription = scope.observe { _ in _ = store }
            store.dispatch(TallyAction.increment)
            subscription.cancel()
        }
        #expect(weakStore == nil)
        #expect(weakCaptured == nil)
        #expect(weakScope == nil)
    }

    @Test("the state is an async sequence of every state")
    func valuesSequence() async {
        let store = Store(Tally())
        var seen: [Int] = []
        for await state in store.values {
            seen.append(state.count)
            if state.count == 3 { break }
            store.dispatch(TallyAction.increment)
        }
        #expect(seen == [0, 1, 2, 3])
    }
}

@Suite("Store child actions")
struct ChildActionTests {
    struct App: Equatable {
        var todos: [String] = []
        var tally = Tally()
    }

    enum TodoAction: ChildAction {
        case add(String)
        case removeAll
        static var child: WritableKeyPath<App, [String]> { \.todos }
        func reduce(child todos: inout [String]) {
            switch self {
            case .add(let title): todos.append(title)
            case .removeAll: todos.removeAll()
            }
        }
    }

    @Test("a child action reduces only its part of the state")
    func childAction() {
        let store = Store(App())
        let tally = Recorder(store.scope(\.tally))
        store.dispatch(TodoAction.add("milk"))
        store.dispatch(TodoAction.add("eggs"))
        #expect(store.state.value.todos == ["milk", "eggs"])
        #expect(tally.values.count == 1)
    }

    @Test("a feature's action lifted to a larger state reduces that part")
    func liftedAction() {
        let store = Store(App())
        store.dispatch(TallyAction.add(3).lifted(to: \App.tally))
        store.dispatch(Increment().lifted(to: \App.tally))
        #expect(store.state.value.tally.count == 4)
        #expect(store.state.value.todos.isEmpty)
    }
}
