import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Observable.fromAsync and Observable.deferred", .timeLimit(.minutes(5)))
struct FromAsyncTests {
    @Test("fromAsync sends the returned value, then completes")
    func value() async throws {
        var received: [Int] = []
        for try await value in Observable.fromAsync({ 6 * 7 }).values { received.append(value) }
        #expect(received == [42])
    }

    @Test("fromAsync fails with the thrown error")
    func failure() async {
        let recorder = Recorder(Observable<Int>.fromAsync { throw TestError(code: 5) })
        #expect(await eventually { recorder.error != nil })
        #expect(recorder.events == [.error(TestError(code: 5))])
    }

    @Test("each subscription runs the operation in a task of its own")
    func perSubscription() async {
        let runs = Atomic<Int>(0)
        let source = Observable.fromAsync { runs.add(1, ordering: .relaxed).newValue }
        let first = Recorder(source)
        let second = Recorder(source)
        #expect(await eventually { first.isCompleted && second.isCompleted })
        #expect(runs.load(ordering: .relaxed) == 2)
        #expect(Set(first.values + second.values) == [1, 2])
    }

    @Test("cancelling the subscription cancels the task, and nothing is delivered")
    func cancelCancelsTheTask() async {
        let sawCancellation = Atomic<Bool>(false)
        let started = Atomic<Bool>(false)
        let recorder = Recorder(Observable<Int>.fromAsync {
            started.store(true, ordering: .relaxed)
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                sawCancellation.store(true, ordering: .relaxed)
                throw error
            }
            return 1
        })
        #expect(await eventually { started.load(ordering: .relaxed) })
        recorder.cancel()
        #expect(await eventually { sawCancellation.load(ordering: .relaxed) })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(recorder.events.isEmpty)
    }

    @Test("an operation that ignores cancellation delivers nothing after the cancel")
    func ignoresCancellation() async {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let finished = Atomic<Bool>(false)
        let recorder = Recorder(Observable<Int>.fromAsync {
            for await _ in gate { break }
            finished.store(true, ordering: .relaxed)
            return 7
        })
        recorder.cancel()
        open.yield()
        #expect(await eventually { finished.load(ordering: .relaxed) })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(recorder.events.isEmpty)
    }

    @Test("what the operation captured is released once it finished or was cancelled", arguments: [false, true])
    func releases(cancelling: Bool) async {
        var token: Token? = Token()
        weak let weakToken = token
        let recorder = Recorder(Observable<Int>.fromAsync { [token] in
            if cancelling { try await Task.sleep(for: .seconds(30)) }
            return token!.id
        })
        token = nil
        if cancelling { recorder.cancel() }
        #expect(await eventually { weakToken == nil })
        withExtendedLifetime(recorder) {}
    }

    @Test("deferred makes the source for each subscriber when it subscribes")
    func deferredPerSubscriber() {
        let made = Shared(0)
        let source = Observable.deferred { () -> Observable<Int> in
            made.value += 1
            return Observable.of(made.value, made.value * 10)
        }
        #expect(made.value == 0)
        #expect(Recorder(source).events == [.next(1), .next(10), .completed])
        #expect(Recorder(source).events == [.next(2), .next(20), .completed])
    }

    @Test("deferred hands a throwing factory's error to the subscriber")
    func deferredThrows() {
        let source = Observable<Int>.deferred { () throws -> Observable<Int> in throw TestError(code: 3) }
        #expect(Recorder(source).events == [.error(TestError(code: 3))])
    }

    @Test("take stops an endless source made by deferred")
    func deferredKeepsTheEarlySlot() {
        let source = Observable.deferred { Observable.from(sequence(first: 1) { $0 + 1 }) }
        #expect(Recorder(source.take(2)).events == [.next(1), .next(2), .completed])
    }
}
