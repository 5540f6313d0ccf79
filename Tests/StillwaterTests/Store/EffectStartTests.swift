import Foundation
import Synchronization
import Testing
@testable import Stillwater

/// The actions a stream effect sends while it is being subscribed (during its start): the store reduces
/// the first one right after the start when nothing else was queued, queues the rest, and keeps each in
/// the place of the queue where it was sent, whichever thread sent it.
@Suite("Store effects: actions sent during the start")
struct EffectStartTests {
    /// A store, reachable from the effects the test builds before the store exists.
    private final class StoreBox: @unchecked Sendable {
        var store: Store<EffectLog>?
    }

    /// Runs `body` on a new thread and returns once it ran.
    private static func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        done.wait()
    }

    /// What a stream does while it is being subscribed: send an action, or have the store dispatch one
    /// (which queues it, since the store is busy reducing the action that started the stream).
    enum Move: Sendable, CustomTestStringConvertible {
        case send(String), dispatch(String)
        var testDescription: String {
            switch self {
            case .send(let name): "send \(name)"
            case .dispatch(let name): "dispatch \(name)"
            }
        }
    }

    @Test("actions sent and work queued during the start are reduced in the order they happened", arguments: [
        ([Move.send("a"), .dispatch("x")], ["start", "a", "x"]),
        ([Move.dispatch("x"), .send("a")], ["start", "x", "a"]),
        ([Move.send("a"), .dispatch("x"), .send("b"), .dispatch("y"), .send("c")], ["start", "a", "x", "b", "y", "c"]),
        ([Move.send("a"), .send("b"), .dispatch("x")], ["start", "a", "b", "x"]),
    ])
    func orderDuringStart(moves: [Move], expected: [String]) {
        let box = StoreBox()
        let store = Store(EffectLog())
        box.store = store
        store.dispatch(Step("start") {
            .stream(Observable<Step> { observer in
                for move in moves {
                    switch move {
                    case .send(let name): observer(.next(Step(name)))
                    case .dispatch(let name): box.store?.dispatch(Step(name))
                    }
                }
                observer(.completed)
                return .empty
            })
        })
        #expect(store.state.value.log == expected)
        #expect(store.runningEffectCount == 0)
    }

    @Test("with middleware, each action passes through it whole, one after the other, not inside another")
    func middlewareNotNested() {
        let trace = Shared<[String]>([])
        let tracer = Middleware<EffectLog> { _, action, next in
            let name = (action as? Step)?.name ?? "?"
            trace.value.append("in " + name)
            next(action)
            trace.value.append("out " + name)
        }
        let store = Store(EffectLog(), middleware: [tracer])
        store.dispatch(Step("start") { .stream(Observable.just(Step("a") { .stream(Observable.just(Step("b"))) })) })
        #expect(trace.value == ["in start", "out start", "in a", "out a", "in b", "out b"])
        #expect(store.state.value.log == ["start", "a", "b"])
    }

    @Test("an action another thread sends during the start is reduced in the order the stream sent it")
    func otherThreadDuringStart() {
        let store = Store(EffectLog())
        store.dispatch(Step("start") {
            .stream(Observable<Step> { observer in
                observer(.next(Step("a")))
                nonisolated(unsafe) let observer = observer
                Self.onAnotherThread { observer(.next(Step("b"))) }
                observer(.next(Step("c")))
                observer(.completed)
                return .empty
            })
        })
        #expect(store.state.value.log == ["start", "a", "b", "c"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("an action another thread sends during the start is queued where it was sent, before work queued after it")
    func otherThreadDuringStartKeepsItsPlace() {
        let box = StoreBox()
        let store = Store(EffectLog())
        box.store = store
        store.dispatch(Step("start") {
            .stream(Observable<Step> { observer in
                nonisolated(unsafe) let observer = observer
                Self.onAnotherThread { observer(.next(Step("b"))) }
                box.store?.dispatch(Step("x"))
                observer(.completed)
                return .empty
            })
        })
        #expect(store.state.value.log == ["start", "b", "x"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("another thread that sends and ends during the start leaves nothing running and nothing lost")
    func otherThreadEndsDuringStart() {
        let store = Store(EffectLog())
        store.dispatch(Step("start") {
            .stream(Observable<Step> { observer in
                nonisolated(unsafe) let observer = observer
                Self.onAnotherThread {
                    observer(.next(Step("b")))
                    observer(.completed)
                }
                return .empty
            })
        })
        #expect(store.state.value.log == ["start", "b"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("actions another thread keeps sending while the start ends are reduced in the order it sent them")
    func otherThreadSendsAcrossTheStartsEnd() async {
        let count = 50_000
        let sentEnough = DispatchSemaphore(value: 0)
        let store = Store(EffectLog())
        store.dispatch(Step("start") {
            .stream(Observable<Step> { observer in
                nonisolated(unsafe) let observer = observer
                Thread {
                    for index in 0..<count {
                        observer(.next(Step("\(index)")))
                        // Many actions wait when the start ends, and more come while they are queued.
                        if index == 10_000 { sentEnough.signal() }
                    }
                    observer(.completed)
                }.start()
                sentEnough.wait()
                return .empty
            })
        })
        #expect(await eventually { store.state.value.log.count == count + 1 })
        let log = store.state.value.log
        let expected = ["start"] + (0..<count).map { "\($0)" }
        let firstMisplaced = expected.indices.first { $0 >= log.count || log[$0] != expected[$0] }
        #expect(firstMisplaced == nil, "at \(firstMisplaced ?? 0): \(log[(firstMisplaced ?? 0)...].prefix(3))")
    }

    @Test("an action sent after a run effect's operation returned is dropped, and keeps nothing alive")
    func sendAfterTheOperationReturned() async {
        final class Handler: Sendable {}
        weak var weakHandler: Handler?
        let kept = Mutex<Send<Step>?>(nil)
        do {
            let handler = Handler()
            weakHandler = handler
            // The runtime holds the error handler: a cycle through the runtime would keep it alive.
            let store = Store(EffectLog(), dependencies: Dependencies(),
                              onEffectError: { _ in withExtendedLifetime(handler) {} })
            store.dispatch(Step("start") { .run { send, _ in kept.withLock { $0 = send } } })
            #expect(await eventually { kept.withLock { $0 != nil } && store.runningEffectCount == 0 })
            let send = kept.withLock { $0! }
            let sent = DispatchSemaphore(value: 0)
            Thread {
                send(Step("late"))
                sent.signal()
            }.start()
            sent.wait()
            send(Step("late, from the test"))
            try? await Task.sleep(for: .milliseconds(50))
            #expect(store.state.value.log == ["start"])
            kept.withLock { $0 = nil }
        }
        #expect(weakHandler == nil)
    }

    @Test("a chain of 20 000 effects, each sending the next action during its start, runs on a small stack")
    func longChain() {
        @Sendable func step(_ remaining: Int) -> Step {
            Step("\(remaining)") { remaining == 0 ? .none : .stream(Observable.just(step(remaining - 1))) }
        }
        let store = Store(EffectLog())
        // A thread with a 512 KiB stack: 20 000 nested reduces would need far more.
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            store.dispatch(step(20_000))
            finished.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        finished.wait()
        #expect(store.state.value.log.count == 20_001)
        #expect(store.state.value.log.last == "0")
    }

    @Test("a stream effect that outlives its start, after ones that ended in theirs, keeps delivering and can be cancelled")
    func outlivesStartAfterReuse() {
        let subject = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("sync 1") { .stream(Observable.just(Step("a"))) })
        store.dispatch(Step("live") { .stream(subject).cancellable(id: "live") })
        store.dispatch(Step("sync 2") { .stream(Observable.just(Step("b"))) })
        #expect(store.runningEffectCount == 1)
        subject.send(Step("from subject"))
        store.dispatch(Step("sync 3") { .stream(Observable.just(Step("c"))) })
        subject.send(Step("again"))
        store.dispatch(Step("stop") { .cancel(id: "live") })
        subject.send(Step("after cancel"))
        #expect(store.state.value.log == [
            "sync 1", "a", "live", "sync 2", "b", "from subject", "sync 3", "c", "again", "stop",
        ])
        #expect(store.runningEffectCount == 0)
    }

    @Test("effects of two action types take turns without mixing their sinks")
    func twoOutputTypes() {
        struct Tally: Equatable, Sendable { var numbers: [Int] = []; var words: [String] = [] }
        enum Number: EffectAction, Sendable {
            case start(Int), got(Int)
            func reduce(into state: inout Tally) -> Effect<Number> {
                switch self {
                case .start(let value): return .stream(Observable.just(.got(value)))
                case .got(let value): state.numbers.append(value); return .none
                }
            }
        }
        enum Word: EffectAction, Sendable {
            case start(String), got(String)
            func reduce(into state: inout Tally) -> Effect<Word> {
                switch self {
                case .start(let value): return .stream(Observable.just(.got(value)))
                case .got(let value): state.words.append(value); return .none
                }
            }
        }
        let store = Store(Tally())
        for index in 0..<50 {
            store.dispatch(Number.start(index))
            store.dispatch(Word.start("w\(index)"))
        }
        #expect(store.state.value.numbers == Array(0..<50))
        #expect(store.state.value.words == (0..<50).map { "w\($0)" })
    }

    @Test("a released store frees what a stream effect that outlived its start captured")
    func releasedAfterReuse() {
        final class Captured: Sendable {}
        weak var weakCaptured: Captured?
        let subject = PublishSubject<Step>()
        do {
            let store = Store(EffectLog())
            store.dispatch(Step("sync") { .stream(Observable.just(Step("a"))) })
            let captured = Captured()
            weakCaptured = captured
            store.dispatch(Step("live") { .stream(subject.map { step in withExtendedLifetime(captured) { step } }) })
            #expect(store.runningEffectCount == 1)
        }
        #expect(weakCaptured == nil)
        subject.send(Step("after release"))
    }
}
