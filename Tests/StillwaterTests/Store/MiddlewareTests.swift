import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Store middleware")
struct MiddlewareTests {
    @Test("middleware sees each action and the state before it, in the order given")
    func seesActionsAndStateBefore() {
        let log = Shared<[String]>([])
        let first = Middleware<Tally> { store, action, next in
            log.value.append("first \(action) at \(store.state.value.count)")
            next(action)
            log.value.append("first after at \(store.state.value.count)")
        }
        let second = Middleware<Tally> { store, action, next in
            log.value.append("second \(action) at \(store.state.value.count)")
            next(action)
        }
        let store = Store(Tally(), middleware: [first, second])
        store.dispatch(TallyAction.increment)
        #expect(log.value == [
            "first increment at 0", "second increment at 0", "first after at 1",
        ])
    }

    @Test("middleware can replace an action and drop another")
    func replaceAndDrop() {
        let doubler = Middleware<Tally> { _, action, next in
            if case .add(let amount)? = action as? TallyAction {
                next(TallyAction.add(amount * 2))
            } else {
                next(action)
            }
        }
        let noRenames = Middleware<Tally>.filter { action, _ in
            if case .rename = action as? TallyAction { return false }
            return true
        }
        let store = Store(Tally(), middleware: [doubler, noRenames])
        store.dispatch(TallyAction.add(5))
        store.dispatch(TallyAction.rename("blocked"))
        #expect(store.state.value.count == 10)
        #expect(store.state.value.name == "x")
    }

    @Test("a filter sees the state before the action")
    func filterSeesState() {
        let capped = Middleware<Tally>.filter { _, state in state.count < 3 }
        let store = Store(Tally(), middleware: [capped])
        for _ in 0..<10 { store.dispatch(TallyAction.increment) }
        #expect(store.state.value.count == 3)
    }

    @Test("actions dispatched by middleware are reduced after the current one, after observers saw it")
    func middlewareDispatchIsQueued() {
        let echo = Middleware<Tally> { store, action, next in
            if case .setA(let value)? = action as? TallyAction {
                store.dispatch(TallyAction.setB(value))
            }
            next(action)
        }
        let store = Store(Tally(), middleware: [echo])
        let seen = Recorder(store.state.map { "\($0.a),\($0.b)" })
        store.dispatch(TallyAction.setA(4))
        #expect(seen.values == ["0,0", "4,0", "4,4"])
    }

    @Test("the logging middleware prints each action and the properties it changed")
    func logging() {
        let lines = Shared<[String]>([])
        let store = Store(Tally(), middleware: [.logging("tally") { lines.value.append($0) }])
        store.dispatch(TallyAction.add(2))
        store.dispatch(TallyAction.add(0))
        store.dispatch(Increment())
        #expect(lines.value == [
            "[tally] add(2)", "[tally]   count: 0 -> 2",
            "[tally] add(0)", "[tally]   unchanged",
            "[tally] Increment(by: 1)", "[tally]   count: 2 -> 3",
        ])
    }

    @Test("the logging summary shows the whole state when it has no stored properties")
    func summaryOfPlainValues() {
        #expect(StateSummary.changes(from: 1, to: 2) == ["1 -> 2"])
        #expect(StateSummary.changes(from: "a", to: "a") == ["unchanged"])
    }
}
