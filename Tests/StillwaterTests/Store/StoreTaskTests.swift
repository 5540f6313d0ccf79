import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("StoreTask", .timeLimit(.minutes(5)))
struct StoreTaskTests {
    @Test("finish waits for the action's task effect, the action it sent, and that action's own task effect")
    func finishWaitsForTheWholeTree() async {
        let store = Store(EffectLog())
        let task = store.dispatch(Step("start") {
            .run { send, _ in
                try await Task.sleep(for: .milliseconds(5))
                send(Step("first") {
                    .run { send, _ in
                        try await Task.sleep(for: .milliseconds(5))
                        send(Step("second"))
                    }
                })
            }
        })
        #expect(!task.hasFinished)
        await task.finish()
        #expect(task.hasFinished)
        #expect(store.state.value.log == ["start", "first", "second"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("a dispatch whose effects end during it returns a finished task", arguments: [0, 1, 2])
    func synchronousEffectsFinishAtOnce(kind: Int) async {
        let store = Store(EffectLog())
        let effect: @Sendable () -> Effect<Step> = switch kind {
        case 0: { .none }
        case 1: { .send(Step("sent")) }
        default: { .stream(Observable.of(Step("a"), Step("b"))) }
        }
        let task = store.dispatch(Step("start", effect))
        #expect(task.hasFinished)
        #expect(task.completion == nil)
        await task.finish()
    }

    @Test("an action a stream effect sends during its start is reduced at once; when the stream outlives the start, finish waits for the stream and for that action's effects")
    func actionSentDuringALastingStart() async {
        let store = Store(EffectLog())
        let gate = AsyncStream<Void>.makeStream()
        let stream = BehaviorSubject(Step("first") {
            .run { send, _ in
                for await _ in gate.stream {}
                send(Step("first done"))
            }
        })
        let task = store.dispatch(Step("start") { .stream(stream) })
        #expect(store.state.value.log == ["start", "first"])
        #expect(!task.hasFinished)
        stream.send(Step("second"))
        #expect(store.state.value.log == ["start", "first", "second"])
        stream.complete()
        // The stream ended; the effect of "first" still runs.
        #expect(!task.hasFinished)
        gate.continuation.finish()
        await task.finish()
        #expect(task.hasFinished)
        #expect(store.state.value.log == ["start", "first", "second", "first done"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("a concatenation's later effects belong to the task too")
    func concatenationIsWaitedFor() async {
        let store = Store(EffectLog())
        let task = store.dispatch(Step("start") {
            .concatenate(
                .run { send, _ in try await Task.sleep(for: .milliseconds(5)); send(Step("one")) },
                .run { send, _ in try await Task.sleep(for: .milliseconds(5)); send(Step("two")) })
        })
        await task.finish()
        #expect(store.state.value.log == ["start", "one", "two"])
    }

    @Test("finish does not wait for effects another dispatch started, and cancel leaves them running")
    func otherDispatchesAreSeparate() async {
        let store = Store(EffectLog())
        let gate = AsyncStream<Void>.makeStream()
        let long = store.dispatch(Step("long") {
            .run { send, _ in
                for await _ in gate.stream {}
                send(Step("long done"))
            }
        })
        let short = store.dispatch(Step("short") { .run { send, _ in send(Step("short done")) } })
        await short.finish()
        short.cancel()
        #expect(!long.hasFinished)
        #expect(store.runningEffectCount == 1)
        gate.continuation.finish()
        await long.finish()
        #expect(store.state.value.log.suffix(1) == ["long done"])
    }

    @Test("cancel stops the task's effects, and nothing they send afterwards is reduced")
    func cancelStops() async {
        let store = Store(EffectLog())
        let started = AsyncStream<Void>.makeStream()
        let task = store.dispatch(Step("start") {
            .run { send, _ in
                started.continuation.yield()
                try? await Task.sleep(for: .seconds(30))
                send(Step("too late"))
            }
        })
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        task.cancel()
        #expect(task.isCancelled)
        await task.finish()
        #expect(store.state.value.log == ["start"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("cancelling the task that awaits finish cancels the effects")
    func cancellingTheWaiterCancels() async {
        let store = Store(EffectLog())
        let task = store.dispatch(Step("start") {
            .run { send, _ in
                try await Task.sleep(for: .seconds(30))
                send(Step("too late"))
            }
        })
        let waiter = Task { await task.finish() }
        waiter.cancel()
        await waiter.value
        #expect(task.isCancelled)
        #expect(store.state.value.log == ["start"])
    }

    @Test("releasing the store ends its tasks")
    func storeReleaseEnds() async {
        var store: Store<EffectLog>? = Store(EffectLog())
        let task = store!.dispatch(Step("start") {
            .stream(Observable<Step>.never())
        })
        #expect(!task.hasFinished)
        store = nil
        await task.finish()
        #expect(task.hasFinished)
    }

    @Test("an effect action dispatched from another thread while the store is busy still gets its task")
    func queuedDispatch() async {
        let store = Store(EffectLog())
        let inner = Shared<StoreTask?>(nil)
        // Dispatched from inside an observer: queued behind the delivery in progress.
        let subscription = store.state.observe { state in
            guard state.log == ["outer"] else { return }
            inner.value = store.dispatch(Step("inner") {
                .run { send, _ in try await Task.sleep(for: .milliseconds(5)); send(Step("inner done")) }
            })
        }
        store.dispatch(Step("outer"))
        let task = try! #require(inner.value)
        await task.finish()
        #expect(store.state.value.log == ["outer", "inner", "inner done"])
        withExtendedLifetime(subscription) {}
    }
}
