import Testing
@testable import Stillwater
import StillwaterTesting

/// A source that fails its first `failures` subscriptions after sending the attempt's number, then
/// sends it and completes; it counts its subscriptions.
final class FlakySource: @unchecked Sendable {
    let failures: Int
    let attempts = Shared(0)

    init(failures: Int) { self.failures = failures }

    var stream: Observable<Int> {
        Observable.create { [attempts, failures] emitter in
            attempts.value += 1
            emitter.send(attempts.value)
            if attempts.value <= failures { emitter.fail(TestError(code: attempts.value)) } else { emitter.complete() }
            return .empty
        }
    }
}

@Suite("retry")
struct RetryTests {
    @Test("values pass through, and a source that never fails is subscribed once")
    func passesValues() {
        #expect(values(of: { $0.retry(3) }, sending: [1, 2, 3]) == [1, 2, 3])
        let flaky = FlakySource(failures: 0)
        #expect(Recorder(flaky.stream.retry(3)).events == [.next(1), .completed])
        #expect(flaky.attempts.value == 1)
    }

    @Test("an empty source completes")
    func empty() { expectCompletesWhenEmpty { $0.retry(2) } }

    @Test("a failure subscribes again, up to count times; the values of failed attempts stay sent",
          arguments: [0, 1, 2, 5])
    func retriesUpToCount(count: Int) {
        let flaky = FlakySource(failures: 3)
        let recorded = Recorder(flaky.stream.retry(count)).events
        if count >= 3 {
            #expect(recorded == [.next(1), .next(2), .next(3), .next(4), .completed])
            #expect(flaky.attempts.value == 4)
        } else {
            let attempts = count + 1
            #expect(recorded == (1...attempts).map(Event.next) + [.error(TestError(code: attempts))])
            #expect(flaky.attempts.value == attempts)
        }
    }

    @Test("a source that fails while being subscribed is retried without growing the stack")
    func synchronousFailuresDoNotNest() {
        let depth = Shared(0)
        let deepest = Shared(0)
        let failing = Observable<Int>.create { emitter in
            depth.value += 1
            deepest.value = max(deepest.value, depth.value)
            emitter.fail(TestError())
            depth.value -= 1
            return .empty
        }
        let recorded = Recorder(failing.retry(10_000)).events
        #expect(recorded == [.error(TestError())])
        #expect(deepest.value == 1)
    }

    @Test("retry(_:delay:scheduler:) waits on the scheduler before each new subscription")
    func delayed() {
        let scheduler = TestScheduler()
        let flaky = FlakySource(failures: 2)
        let recorder = Recorder(flaky.stream.retry(5, delay: .seconds(2), scheduler: scheduler))
        #expect(flaky.attempts.value == 1)
        scheduler.advance(by: .seconds(1))
        #expect(flaky.attempts.value == 1)
        scheduler.advance(by: .seconds(1))
        #expect(flaky.attempts.value == 2)
        scheduler.advance(by: .seconds(2))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("retry(when:): the trigger's value subscribes again, its completion completes, its failure fails")
    func triggerEnds() {
        let trigger = PublishSubject<Void>()
        let flaky = FlakySource(failures: 10)
        let recorder = Recorder(flaky.stream.retry(when: { _ in trigger }))
        #expect(recorder.events == [.next(1)])
        trigger.send(())
        #expect(recorder.events == [.next(1), .next(2)])
        trigger.send(())
        trigger.complete()
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])

        let giveUp = PublishSubject<Void>()
        let second = Recorder(FlakySource(failures: 10).stream.retry(when: { _ in giveUp }))
        giveUp.fail(TestError(code: 99))
        #expect(second.events == [.next(1), .error(TestError(code: 99))])
    }

    @Test("retry(when:) ignores a trigger value while no failure waits")
    func triggerWithoutFailure() {
        let trigger = PublishSubject<Void>()
        let source = PublishSubject<Int>()
        let subscribed = Shared(0)
        let counted = Observable<Int>.create { emitter in
            subscribed.value += 1
            return source.observe { emitter.send($0) }
        }
        let recorder = Recorder(counted.retry(when: { _ in trigger }))
        trigger.send(())
        source.send(1)
        #expect(subscribed.value == 1)
        #expect(recorder.values == [1])
    }

    @Test("cancelling stops the source and the trigger; nothing arrives afterwards")
    func cancel() {
        expectStopsWhenCancelled { $0.retry(3) }
        let trigger = PublishSubject<Void>()
        let flaky = FlakySource(failures: 10)
        let recorder = Recorder(flaky.stream.retry(when: { _ in trigger }))
        recorder.cancel()
        trigger.send(())
        #expect(flaky.attempts.value == 1)
        #expect(trigger.core.observerCount == 0)
    }

    @Test("a value sent from inside the observer is delivered after the current one, also after a retry")
    func reentrant() {
        let source = PublishSubject<Int>()
        let failedOnce = Shared(false)
        let received = Shared<[String]>([])
        let subscription = source.retry(1).observe { value in
            received.value.append("\(value)")
            if value == 1 { source.send(2) }
            if value == 2, !failedOnce.value {
                failedOnce.value = true
                source.fail(TestError())
            }
            received.value.append("/\(value)")
        }
        source.send(1)
        #expect(received.value == ["1", "/1", "2", "/2"])
        // The subject failed, so the retry subscribed to a stopped subject: it ends with the failure.
        withExtendedLifetime(subscription) {}
    }

    @Test("what the chain captured is released when it ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.retry(2) }
    }

    @Test("a negative count stops the program with a message naming the argument")
    func negativeCount() async {
        await #expect(processExitsWith: .failure) {
            _ = Observable<Int>.never().retry(-1)
        }
    }
}
