import Testing
@testable import Stillwater

@Suite("Flux dispatcher")
struct DispatcherTests {
    @Test("every handler receives every payload, in registration order")
    func registrationOrder() throws {
        let dispatcher = Dispatcher<Int>()
        let log = Shared<[String]>([])
        dispatcher.register { log.value.append("a\($0)") }
        dispatcher.register { log.value.append("b\($0)") }
        try dispatcher.dispatch(1)
        try dispatcher.dispatch(2)
        #expect(log.value == ["a1", "b1", "a2", "b2"])
    }

    @Test("an unregistered handler receives nothing more")
    func unregister() throws {
        let dispatcher = Dispatcher<Int>()
        let log = Shared<[Int]>([])
        let token = dispatcher.register { log.value.append($0) }
        try dispatcher.dispatch(1)
        dispatcher.unregister(token)
        dispatcher.unregister(token)
        try dispatcher.dispatch(2)
        #expect(log.value == [1])
    }

    @Test("waitFor runs the named handlers first, and each handler runs once per payload")
    func waitForOrders() throws {
        let dispatcher = Dispatcher<String>()
        let log = Shared<[String]>([])
        let tokens = Shared<[DispatchToken]>([])
        tokens.value.append(dispatcher.register { payload in
            try dispatcher.waitFor(tokens.value[2])
            log.value.append("city \(payload)")
        })
        tokens.value.append(dispatcher.register { payload in
            try dispatcher.waitFor(tokens.value[0], tokens.value[2])
            log.value.append("price \(payload)")
        })
        tokens.value.append(dispatcher.register { log.value.append("country \($0)") })
        try dispatcher.dispatch("fr")
        #expect(log.value == ["country fr", "city fr", "price fr"])
    }

    @Test("a circular waitFor throws an error naming the tokens, and the dispatch finishes")
    func circularWait() {
        let dispatcher = Dispatcher<Int>()
        let tokens = Shared<[DispatchToken]>([])
        let reached = Shared<[String]>([])
        tokens.value.append(dispatcher.register { _ in
            try dispatcher.waitFor(tokens.value[1])
            reached.value.append("first")
        })
        tokens.value.append(dispatcher.register { _ in
            try dispatcher.waitFor(tokens.value[0])
            reached.value.append("second")
        })
        dispatcher.register { _ in reached.value.append("third") }
        let (first, second) = (tokens.value[0], tokens.value[1])
        #expect(throws: DispatchError.circularWait([first, second, first])) {
            try dispatcher.dispatch(1)
        }
        #expect(reached.value == ["third"])
        #expect(!dispatcher.isDispatching)
        let message = DispatchError.circularWait([first, second, first]).description
        #expect(message.contains("#1 waits for #2 waits for #1"), "message: \(message)")
    }

    @Test("a handler that waits for itself is a circle of one")
    func waitsForItself() {
        let dispatcher = Dispatcher<Int>()
        let token = Shared<DispatchToken?>(nil)
        token.value = dispatcher.register { _ in try dispatcher.waitFor(token.value!) }
        #expect(throws: DispatchError.circularWait([token.value!, token.value!])) {
            try dispatcher.dispatch(0)
        }
    }

    @Test("waitFor outside a handler, or on an unknown token, throws")
    func waitForMisuse() throws {
        let dispatcher = Dispatcher<Int>()
        let known = dispatcher.register { _ in }
        #expect(throws: DispatchError.notDispatching) { try dispatcher.waitFor(known) }
        let unknown = DispatchToken(id: 99)
        dispatcher.register { _ in try dispatcher.waitFor(unknown) }
        #expect(throws: DispatchError.unknownToken(unknown)) { try dispatcher.dispatch(0) }
    }

    @Test("a dispatch from inside a handler is queued and runs after the current one")
    func nestedDispatch() throws {
        let dispatcher = Dispatcher<Int>()
        let log = Shared<[String]>([])
        dispatcher.register { payload in
            log.value.append("a\(payload)")
            if payload == 1 { try dispatcher.dispatch(2) }
        }
        dispatcher.register { log.value.append("b\($0)") }
        try dispatcher.dispatch(1)
        #expect(log.value == ["a1", "b1", "a2", "b2"])
    }

    @Test("a handler's error does not stop the others, and is rethrown by the dispatch")
    func handlerErrors() {
        let dispatcher = Dispatcher<Int>()
        let log = Shared<[Int]>([])
        dispatcher.register { _ in throw TestError(code: 7) }
        dispatcher.register { log.value.append($0) }
        #expect(throws: TestError(code: 7)) { try dispatcher.dispatch(5) }
        #expect(log.value == [5])
    }

    @Test("payloads dispatched from many threads reach each handler one at a time, all of them")
    func concurrentDispatch() async {
        let dispatcher = Dispatcher<Int>()
        let overlaps = OverlapDetector()
        let received = Shared<[Int]>([])
        dispatcher.register { payload in overlaps.enter { received.value.append(payload) } }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<2_000 { try? dispatcher.dispatch(thread * 10_000 + index) }
                }
            }
        }
        #expect(overlaps.overlaps == 0)
        #expect(received.value.count == 8_000)
        #expect(Set(received.value).count == 8_000)
    }

    @Test("a store registered with a dispatcher reduces the payloads as actions")
    func storeAsFluxStore() throws {
        let dispatcher = Dispatcher<TallyAction>()
        let store = Store(Tally())
        let audit = Store(Tally())
        let storeToken = dispatcher.register { store.dispatch($0) }
        dispatcher.register { action in
            try dispatcher.waitFor(storeToken)
            audit.dispatch(TallyAction.setA(store.state.value.count))
        }
        try dispatcher.dispatch(.add(4))
        #expect(store.state.value.count == 4)
        #expect(audit.state.value.a == 4)
    }
}
