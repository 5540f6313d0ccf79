import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

private struct Todos: Equatable {
    var done: Set<Int> = []
    var toggles = 0
}

private enum TodoAction: Action, Equatable {
    case toggle(Int)
    case clear

    func reduce(_ state: inout Todos) {
        switch self {
        case .toggle(let id):
            if state.done.remove(id) == nil { state.done.insert(id) }
            state.toggles += 1
        case .clear:
            state.done = []
        }
    }
}

@Suite("Routing handles into a store")
struct StoreRoutingTests {
    @Test("handle.map { action }.bind(to: store) dispatches each call as an action")
    func bindMappedHandle() {
        let store = Store(Todos())
        let onToggle = ActionHandle<Int>()
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)
        onToggle(1)
        onToggle(2)
        onToggle(1)
        #expect(store.state.value == Todos(done: [2], toggles: 3))
        withExtendedLifetime(routing) {}
    }

    @Test("a handle whose parameter is an action binds to the store directly")
    func bindActionHandle() {
        let store = Store(Todos())
        let onAction = ActionHandle<TodoAction>()
        let routing = onAction.bind(to: store)
        onAction(.toggle(5))
        onAction(.clear)
        onAction(.toggle(6))
        #expect(store.state.value.done == [6])
        withExtendedLifetime(routing) {}
    }

    @Test("map(_:).bind(to:) builds the action from each call")
    func dispatchShorthand() {
        let store = Store(Todos())
        let onClear = ActionHandle<Void>()
        let onToggle = ActionHandle<Int>()
        let routes = [
            onToggle.map { TodoAction.toggle($0) }.bind(to: store),
            onClear.map { TodoAction.clear }.bind(to: store),
        ]
        onToggle(3)
        onToggle(4)
        #expect(store.state.value.done == [3, 4])
        onClear()
        #expect(store.state.value.done == [])
        withExtendedLifetime(routes) {}
    }

    @Test("cancelling the routing stops dispatching; the stream's end does not end the store")
    func endings() {
        let store = Store(Todos())
        let onToggle = ActionHandle<Int>()
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)
        onToggle(1)
        routing.cancel()
        onToggle(2)
        #expect(store.state.value.done == [1])

        let finite = PublishSubject<TodoAction>()
        let finiteRouting = finite.bind(to: store)
        finite.send(.toggle(3))
        finite.complete()
        store.dispatch(TodoAction.toggle(4))
        #expect(store.state.value.done == [1, 3, 4])
        withExtendedLifetime(finiteRouting) {}
    }

    @Test("calls from many threads are each reduced once, and observers see every state in order")
    func manyThreads() {
        let store = Store(Todos())
        let onToggle = ActionHandle<Int>()
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)
        let counts = Recorder(store.scope(\.toggles))
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for index in 0..<2_500 { onToggle(lane * 2_500 + index) }
        }
        #expect(store.state.value.toggles == 10_000)
        #expect(store.state.value.done.count == 10_000)
        #expect(counts.values == Array(0...10_000))
        withExtendedLifetime(routing) {}
    }

    @Test("a call made by a store observer is reduced after every observer saw the current state")
    func reentrantCall() {
        let store = Store(Todos())
        let onToggle = ActionHandle<Int>()
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)
        let log = Shared<[String]>([])
        let a = store.scope(\.toggles).observe { toggles in
            log.value.append("A\(toggles)")
            if toggles == 1 { onToggle(9) }
        }
        let b = store.scope(\.toggles).observe { toggles in log.value.append("B\(toggles)") }
        onToggle(8)
        #expect(log.value == ["A0", "B0", "A1", "B1", "A2", "B2"])
        #expect(store.state.value.done == [8, 9])
        withExtendedLifetime((routing, a, b)) {}
    }

    @Test("the routing keeps the store alive while it lasts, and lets it go when cancelled")
    func storeLifetime() {
        let onToggle = ActionHandle<Int>()
        var store: Store<Todos>? = Store(Todos())
        weak let weakStore = store
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store!)
        store = nil
        #expect(weakStore != nil)
        onToggle(1)
        #expect(weakStore?.state.value.done == [1])
        routing.cancel()
        #expect(weakStore == nil)
    }
}
