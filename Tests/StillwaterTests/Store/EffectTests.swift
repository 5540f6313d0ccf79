import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// The state of the effect tests: a log of what was reduced, in order.
struct EffectLog: Equatable, Sendable {
    var log: [String] = []
}

/// Effect actions for the tests; each case's effect is built by the test through `make`.
struct Step: EffectAction, Sendable {
    var name: String
    var make: @Sendable () -> Effect<Step> = { .none }

    init(_ name: String, _ make: @escaping @Sendable () -> Effect<Step> = { .none }) {
        self.name = name
        self.make = make
    }

    func reduce(into state: inout EffectLog) -> Effect<Step> {
        state.log.append(name)
        return make()
    }
}

private struct CancelID: Hashable, Sendable {}

@Suite("Store effects")
struct EffectTests {
    @Test("a stream effect's actions are reduced after the action, in the order it sends them")
    func streamOrder() {
        let store = Store(EffectLog())
        store.dispatch(Step("start") { .stream(Observable.of(Step("a"), Step("b"), Step("c"))) })
        store.dispatch(Step("next"))
        #expect(store.state.value.log == ["start", "a", "b", "c", "next"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("observers see the state of the action before its effect's actions are reduced")
    func observersFirst() {
        let store = Store(EffectLog())
        let seen = Shared<[[String]]>([])
        let subscription = store.scope(\.log).observe { seen.value.append($0) }
        store.dispatch(Step("start") { .send(Step("sent")) })
        #expect(seen.value == [[], ["start"], ["start", "sent"]])
        subscription.cancel()
    }

    @Test("an effect's actions pass through the middleware like any action")
    func throughMiddleware() {
        let names = Shared<[String]>([])
        let recorder = Middleware<EffectLog> { _, action, next in
            if let step = action as? Step { names.value.append(step.name) }
            next(action)
        }
        let store = Store(EffectLog(), middleware: [recorder])
        store.dispatch(Step("start") { .merge(.send(Step("one")), .stream(Observable.just(Step("two")))) })
        #expect(names.value == ["start", "one", "two"])
        #expect(store.state.value.log == ["start", "one", "two"])
    }

    @Test("an effect action's effects run whether it arrives by its own type, through middleware or from another effect")
    func nestedEffects() {
        let store = Store(EffectLog(), middleware: [Middleware { _, action, next in next(action) }])
        store.dispatch(Step("1") { .send(Step("2") { .send(Step("3")) }) })
        #expect(store.state.value.log == ["1", "2", "3"])
        let plain = Store(EffectLog())
        plain.dispatch(Step("1") { .send(Step("2") { .send(Step("3")) }) })
        #expect(plain.state.value.log == ["1", "2", "3"])
    }

    @Test("a stream bound to the store, plain or mapped, starts each effect action's effects")
    func routedEffectActions() {
        let store = Store(EffectLog())
        let handle = ActionHandle<String>()
        let bound = handle.map { name in Step(name) { .send(Step(name + " echo")) } }.bind(to: store)
        let routed = handle.map { name in Step("routed " + name) { .send(Step("routed echo")) } }.bind(to: store)
        handle("a")
        #expect(store.state.value.log == ["a", "a echo", "routed a", "routed echo"])
        bound.cancel()
        routed.cancel()
    }

    @Test("an effect action dispatched as a plain Action (generic code, any Action) runs its effects, with or without middleware",
          arguments: [false, true])
    func genericPlainDispatch(withMiddleware: Bool) {
        func dispatchGenerically<A: Action>(_ action: sending A, to store: Store<A.State>) { store.dispatch(action) }
        let store = withMiddleware
            ? Store(EffectLog(), middleware: [Middleware { _, action, next in next(action) }]) : Store(EffectLog())
        dispatchGenerically(Step("1") { .send(Step("2")) }, to: store)
        let existential: any Action<EffectLog> = Step("3") { .send(Step("4")) }
        store.dispatch(existential)
        #expect(store.state.value.log == ["1", "2", "3", "4"])
    }

    @Test("replaying a recorded session runs no effect again: the actions effects sent are replayed as entries",
          arguments: [false, true])
    func replayRunsNoEffects(withMiddleware: Bool) {
        let history = History<Step>()
        let store = Store(EffectLog(), middleware: [history.middleware])
        let started = Shared(0)
        store.dispatch(Step("ask") {
            started.value += 1
            return .send(Step("answer"))
        })
        #expect(store.state.value.log == ["ask", "answer"])
        #expect(started.value == 1)
        let fresh = History<Step>()
        let replayed = withMiddleware ? Store(EffectLog(), middleware: [fresh.middleware]) : Store(EffectLog())
        fresh.replay(history.entries, into: replayed)
        #expect(replayed.state.value == store.state.value)
        #expect(started.value == 2)               // the reduce ran again; its effect, not
    }

    @Test("a cancelled run effect's failure, whatever its type, is dropped, not reported")
    func errorAfterCancelDropped() async {
        let errors = Shared<[String]>([])
        let store = Store(EffectLog(), dependencies: Dependencies(), onEffectError: { errors.value.append("\($0)") })
        store.dispatch(Step("start") {
            .run({ _, _ in
                do { try await Task.sleep(for: .seconds(30)) } catch { throw TestError(code: 5) }
            }).cancellable(id: "sleeper")
        })
        #expect(store.runningEffectCount == 1)
        store.dispatch(Step("stop") { .cancel(id: "sleeper") })
        #expect(await eventually { store.runningEffectCount == 0 })
        try? await Task.sleep(for: .milliseconds(50))     // the task's catch runs after it was cancelled
        #expect(errors.value.isEmpty)
    }

    @Test("a long concatenation of effects that end at once runs them all, in order, on a small stack")
    func longConcatenation() async {
        // 20 000 children used to recurse three frames each (a crash on the main thread's 8 MB stack);
        // run here on a task, whose stack is smaller still.
        let count = 20_000
        let log = await Task.detached {
            let store = Store(EffectLog())
            store.dispatch(Step("start") { .concatenate((0..<count).map { .send(Step("\($0)")) }) })
            return store.state.value.log
        }.value
        #expect(log.count == count + 1)
        #expect(log.first == "start")
        #expect(log.last == "\(count - 1)")
        #expect(log.dropFirst() == ArraySlice((0..<count).map { "\($0)" }))
    }

    @Test("concatenated effects run one after another; merged ones at once")
    func concatenateAndMerge() {
        let first = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("start") {
            .concatenate(.stream(first), .send(Step("after first")))
        })
        first.send(Step("a"))
        #expect(store.state.value.log == ["start", "a"])
        #expect(store.runningEffectCount == 1)
        first.send(Step("b"))
        first.complete()
        #expect(store.state.value.log == ["start", "a", "b", "after first"])
        #expect(store.runningEffectCount == 0)

        let left = PublishSubject<Step>()
        let right = PublishSubject<Step>()
        store.dispatch(Step("merge") { .merge(.stream(left), .stream(right)) })
        right.send(Step("r"))
        left.send(Step("l"))
        #expect(store.state.value.log.suffix(3) == ["merge", "r", "l"])
        #expect(store.runningEffectCount == 2)
    }

    @Test("an effect cancelled by id delivers nothing after the cancel is reduced")
    func cancelByID() {
        let source = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("start") { .stream(source).cancellable(id: CancelID()) })
        source.send(Step("1"))
        store.dispatch(Step("stop") { .cancel(id: CancelID()) })
        source.send(Step("2"))
        #expect(store.state.value.log == ["start", "1", "stop"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("an action an effect sent before its cancel, still queued when the cancel is reduced, is dropped")
    func cancelDropsQueuedActions() {
        let store = Store(EffectLog())
        // The stream's action is queued during the start (the store is busy reducing); the cancel
        // runs right after it, before the queue drains.
        store.dispatch(Step("start") {
            .merge(.stream(Observable.just(Step("queued"))).cancellable(id: 1), .cancel(id: 1))
        })
        store.dispatch(Step("next"))
        #expect(store.state.value.log == ["start", "next"])
    }

    @Test("an action an effect sent from another thread before a cancel was queued is reduced before it; nothing after")
    func cancelDropsCrossThreadQueued() {
        let store = Store(EffectLog())
        let source = PublishSubject<Step>()
        store.dispatch(Step("start") { .stream(source).cancellable(id: 7) })
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // Hold the store's queue on this thread inside an observer, let another thread's effect action
        // queue behind it, then reduce a cancel first.
        let holder = store.scope(\.log).changes.observe { log in
            if log.last == "hold" {
                entered.signal()
                release.wait()
            }
        }
        let holding = Thread {
            store.dispatch(Step("hold"))
        }
        holding.start()
        entered.wait()
        source.send(Step("late"))          // queued behind "hold"
        store.dispatch(Step("stop") { .cancel(id: 7) })   // queued behind "late"
        release.signal()
        while store.state.value.log.last != "stop" { usleep(100) }
        // "late" was queued before "stop" and is reduced before it: only actions after the cancel drop.
        #expect(store.state.value.log == ["start", "hold", "late", "stop"])
        source.send(Step("after"))
        #expect(store.state.value.log == ["start", "hold", "late", "stop"])
        holder.cancel()
    }

    @Test("cancelInFlight cancels the effects already running under the id before starting")
    func cancelInFlight() {
        let sources = [PublishSubject<Step>(), PublishSubject<Step>()]
        let store = Store(EffectLog())
        for index in sources.indices {
            store.dispatch(Step("start \(index)") { .stream(sources[index]).cancellable(id: "search", cancelInFlight: true) })
        }
        sources[0].send(Step("old"))
        sources[1].send(Step("new"))
        #expect(store.state.value.log == ["start 0", "start 1", "new"])
        #expect(store.runningEffectCount == 1)
    }

    @Test("cancelling a concatenation by its id stops the effects that have not started")
    func cancelConcatenation() {
        let first = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("start") { .concatenate(.stream(first), .send(Step("second"))).cancellable(id: 1) })
        store.dispatch(Step("stop") { .cancel(id: 1) })
        first.complete()
        #expect(store.state.value.log == ["start", "stop"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("an async effect sends its actions from its task, in order")
    func runEffect() async {
        let store = Store(EffectLog())
        store.dispatch(Step("start") {
            .run { send, _ in
                for index in 1...3 { send(Step("async \(index)")) }
            }
        })
        #expect(await eventually { store.state.value.log.count == 4 })
        #expect(store.state.value.log == ["start", "async 1", "async 2", "async 3"])
        #expect(await eventually { store.runningEffectCount == 0 })
    }

    @Test("an error an effect does not handle goes to the store's onEffectError; a catch handler maps it to an action")
    func errors() async {
        let errors = Mutex<[String]>([])
        let store = Store(EffectLog(), dependencies: Dependencies(), onEffectError: { error in
            errors.withLock { $0.append("\(error)") }
        })
        store.dispatch(Step("stream") { .stream(Observable<Step>.failure(TestError(code: 1))) })
        #expect(errors.withLock { $0 } == ["TestError(1)"])
        store.dispatch(Step("run") { .run { _, _ in throw TestError(code: 2) } })
        #expect(await eventually { errors.withLock { $0.count } == 2 })
        #expect(errors.withLock { $0 } == ["TestError(1)", "TestError(2)"])
        store.dispatch(Step("caught") {
            .run({ _, _ in throw TestError(code: 3) }, catch: { error, send in send(Step("failed: \(error)")) })
        })
        #expect(await eventually { store.state.value.log.last == "failed: TestError(3)" })
        #expect(errors.withLock { $0.count } == 2)
    }

    @Test("a cancelled async effect's CancellationError is not reported, and what it sends after is dropped")
    func cancelledRun() async {
        let errors = Mutex<Int>(0)
        let started = Mutex<Bool>(false)
        let store = Store(EffectLog(), dependencies: Dependencies(), onEffectError: { _ in errors.withLock { $0 += 1 } })
        store.dispatch(Step("start") {
            .run { send, _ in
                started.withLock { $0 = true }
                try await Task.sleep(for: .seconds(30))
                send(Step("never"))
            }.cancellable(id: 1)
        })
        #expect(await eventually { started.withLock { $0 } })
        store.dispatch(Step("stop") { .cancel(id: 1) })
        #expect(await eventually { store.runningEffectCount == 0 })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(store.state.value.log == ["start", "stop"])
        #expect(errors.withLock { $0 } == 0)
    }

    @Test("a released store cancels its stream effects and frees what they captured")
    func releaseCancelsStreams() {
        let source = PublishSubject<Step>()
        weak var captured: Token?
        weak var weakStore: Store<EffectLog>?
        do {
            let token = Token()
            captured = token
            let store = Store(EffectLog())
            weakStore = store
            store.dispatch(Step("start") { .stream(source.map { step in _ = token; return step }) })
            #expect(store.runningEffectCount == 1)
        }
        #expect(weakStore == nil)
        #expect(captured == nil)
        source.send(Step("after"))
    }

    @Test("a released store cancels its async effects, whose tasks then free what they captured")
    func releaseCancelsTasks() async {
        weak var captured: Token?
        let started = Mutex<Bool>(false)
        do {
            let token = Token()
            captured = token
            let store = Store(EffectLog())
            store.dispatch(Step("start") {
                .run { _, _ in
                    _ = token
                    started.withLock { $0 = true }
                    try await Task.sleep(for: .seconds(30))
                }
            })
            #expect(await eventually { started.withLock { $0 } })
        }
        #expect(await eventually { captured == nil })
    }

    @Test("effects read the store's dependencies; a timer on a TestScheduler fires in virtual time")
    func dependencies() {
        let scheduler = TestScheduler()
        let store = Store(EffectLog(), dependencies: Dependencies { $0.scheduler = scheduler })
        store.dispatch(Step("start") {
            .stream { dependencies in
                Observable.timer(.milliseconds(300), scheduler: dependencies.scheduler).map { _ in Step("fired") }
            }
        })
        scheduler.advance(by: .milliseconds(299))
        #expect(store.state.value.log == ["start"])
        scheduler.advance(by: .milliseconds(1))
        #expect(store.state.value.log == ["start", "fired"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("an async effect sleeps on the dependencies' scheduler")
    func sleepOnScheduler() async {
        let scheduler = TestScheduler()
        let store = Store(EffectLog(), dependencies: Dependencies { $0.scheduler = scheduler })
        store.dispatch(Step("start") {
            .run { send, dependencies in
                try await dependencies.scheduler.sleep(for: .seconds(1))
                send(Step("woke"))
            }
        })
        #expect(await eventually { scheduler.pendingWorkCount == 1 })
        scheduler.advance(by: .seconds(1))
        #expect(await eventually { store.state.value.log == ["start", "woke"] })
    }

    @Test("threads starting, stopping and feeding cancellable effects: no action of a stopped effect is reduced")
    func cancelRace() async {
        struct Board: Sendable { var stopped: Set<Int> = [0, 1, 2, 3]; var received = 0; var violations = 0 }
        enum Race: EffectAction, @unchecked Sendable {
            case start(Int, PublishSubject<Int>), stop(Int), value(Int)
            func reduce(into board: inout Board) -> Effect<Race> {
                switch self {
                case .start(let id, let source):
                    board.stopped.remove(id)
                    return .stream(source.map { _ in Race.value(id) }).cancellable(id: id, cancelInFlight: true)
                case .stop(let id):
                    board.stopped.insert(id)
                    return .cancel(id: id)
                case .value(let id):
                    if board.stopped.contains(id) { board.violations += 1 } else { board.received += 1 }
                    return .none
                }
            }
        }
        let sources = (0..<4).map { _ in PublishSubject<Int>() }
        let store = Store(Board())
        // The feeders are threads of their own, not tasks, and send a bounded number of values: a thread
        // that runs the store's queue reduces what others queue meanwhile before it returns, so feeders
        // sending until the controllers end could keep a controller reducing forever.
        let feedersDone = DispatchGroup()
        for feeder in 0..<2 {
            feedersDone.enter()
            Thread {
                for round in 0..<6_000 { sources[(round + feeder) % 4].send(round) }
                feedersDone.leave()
            }.start()
        }
        await withTaskGroup(of: Void.self) { group in
            for controller in 0..<2 {
                group.addTask {
                    for round in 0..<1_500 {
                        let id = (round + controller) % 4
                        store.dispatch(round.isMultiple(of: 2) ? Race.start(id, sources[id]) : Race.stop(id))
                    }
                }
            }
        }
        feedersDone.wait()
        for id in 0..<4 { store.dispatch(Race.stop(id)) }
        #expect(store.state.value.violations == 0)
        #expect(store.runningEffectCount == 0)
        let before = store.state.value.received
        store.dispatch(Race.start(0, sources[0]))
        sources[0].send(0)
        #expect(store.state.value.received == before + 1)
    }

    @Test("sleep(for:) on a dispatch-queue scheduler wakes every sleeper, and a cancelled sleeper throws at once")
    func sleepOnQueue() async throws {
        let scheduler = DispatchQueueScheduler(DispatchQueue.global())
        let woken = AtomicCounter()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask {
                    try? await scheduler.sleep(for: .microseconds(index * 10))
                    woken.increment()
                }
            }
        }
        #expect(woken.value == 100)
        let sleeper = Task { try await scheduler.sleep(for: .seconds(60)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test("four threads dispatching effect actions with effects running: nothing lost, nothing reduced twice")
    func manyThreads() async {
        struct Count: Equatable, Sendable { var started = 0; var echoed = 0 }
        enum Echo: EffectAction, Sendable {
            case start(async: Bool), echo
            func reduce(into state: inout Count) -> Effect<Echo> {
                switch self {
                case .start(let isAsync):
                    state.started += 1
                    return isAsync ? .run { send, _ in send(.echo) } : .stream(Observable.just(.echo))
                case .echo:
                    state.echoed += 1
                    return .none
                }
            }
        }
        let store = Store(Count())
        let overlaps = OverlapDetector()
        let subscription = store.state.observe { _ in overlaps.enter {} }
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<2_000 {
                        store.dispatch(Echo.start(async: (index + thread).isMultiple(of: 5)))
                    }
                }
            }
        }
        #expect(await eventually { store.state.value.echoed == 8_000 })
        #expect(store.state.value == Count(started: 8_000, echoed: 8_000))
        #expect(overlaps.overlaps == 0)
        #expect(await eventually { store.runningEffectCount == 0 })
        subscription.cancel()
    }
}
