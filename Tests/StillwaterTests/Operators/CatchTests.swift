import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("catch, catchAndReturn, replaceError, asInfallible(onErrorJustReturn:)")
struct CatchTests {
    @Test("values pass through unchanged while the source does not fail")
    func passesValues() {
        #expect(values(of: { $0.catch { _ in Observable.of(99) } }, sending: [1, 2, 3]) == [1, 2, 3])
    }

    @Test("an empty source completes, and the handler is not called")
    func empty() {
        let called = Shared(0)
        expectCompletesWhenEmpty { $0.catch { _ in called.value += 1; return Observable<Int>.of(9) } }
        #expect(called.value == 0)
    }

    @Test("a completion passes through without calling the handler")
    func completion() {
        let called = Shared(0)
        let recorded = events(of: { $0.catch { _ in called.value += 1; return Observable.of(9) } }, sending: [1])
        #expect(recorded == [.next(1), .completed])
        #expect(called.value == 0)
    }

    @Test("a failure continues with the fallback made from the error, whose end is the end")
    func failureSwitches() {
        let seen = Shared<[TestError]>([])
        let recorded = events(of: { source in
            source.catch { error in
                seen.value.append(error as! TestError)
                return Observable.of(10, 20)
            }
        }, sending: [1, 2], then: .error(TestError(code: 4)))
        #expect(recorded == [.next(1), .next(2), .next(10), .next(20), .completed])
        #expect(seen.value == [TestError(code: 4)])
    }

    @Test("a fallback that fails fails the result with its own error")
    func fallbackFails() {
        let recorded = events(of: { $0.catch { _ in Observable<Int>.failure(TestError(code: 2)) } },
                              sending: [1], then: .error(TestError(code: 1)))
        #expect(recorded == [.next(1), .error(TestError(code: 2))])
    }

    @Test("a source that fails while being subscribed leaves the fallback subscribed, and cancel stops it")
    func failsDuringSubscribe() {
        let fallback = PublishSubject<Int>()
        let recorder = Recorder(Observable<Int>.failure(TestError()).catch { _ in fallback })
        fallback.send(1)
        fallback.send(2)
        #expect(recorder.values == [1, 2])
        recorder.cancel()
        fallback.send(3)
        #expect(recorder.values == [1, 2])
        #expect(fallback.core.observerCount == 0)
    }

    @Test("cancelling stops the source, and after a failure the fallback")
    func cancel() {
        expectStopsWhenCancelled { $0.catch { _ in Observable.of(0) } }
        let source = PublishSubject<Int>()
        let fallback = PublishSubject<Int>()
        let recorder = Recorder(source.catch { _ in fallback })
        source.fail(TestError())
        fallback.send(5)
        recorder.cancel()
        fallback.send(6)
        #expect(recorder.values == [5])
        #expect(fallback.core.observerCount == 0)
    }

    @Test("what the handler captured is released when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.catch { [token] _ in Observable.of(token.id) } }
    }

    @Test("a value sent from inside the observer of the fallback is delivered after the current one")
    func reentrant() {
        let source = PublishSubject<Int>()
        let fallback = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let subscription = source.catch { _ in fallback }.observe { value in
            received.value.append(value)
            if value < 3 { fallback.send(value + 1) }
            received.value.append(-value)
        }
        source.fail(TestError())
        fallback.send(1)
        #expect(received.value == [1, -1, 2, -2, 3, -3])
        withExtendedLifetime(subscription) {}
    }

    @Test("catchAndReturn and replaceError send the value, then complete; a completion passes through")
    func replaceWithValue() {
        let failing: (Observable<Int>) -> Observable<Int> = { $0.catchAndReturn(0) }
        #expect(events(of: failing, sending: [1], then: .error(TestError())) == [.next(1), .next(0), .completed])
        #expect(events(of: { $0.replaceError(with: -1) }, sending: [2], then: .error(TestError()))
                == [.next(2), .next(-1), .completed])
        #expect(events(of: { $0.replaceError(with: -1) }, sending: [2]) == [.next(2), .completed])
    }

    @Test("asInfallible(onErrorJustReturn:) never fails, and its values are read without try")
    func asInfallible() async {
        let source = ReplaySubject<Int>(bufferSize: 3)
        source.send(1)
        source.fail(TestError())
        var seen: [Int] = []
        for await value in source.asInfallible(onErrorJustReturn: 0).map({ $0 * 10 }).values {
            seen.append(value)
        }
        #expect(seen == [10, 0])
    }

    @Test("a source that fails while being subscribed is cancelled at once, whatever the fallback hands back")
    func failedSourceCancelledAtOnce() {
        for fallback in [Observable<Int>.never(), .just(-1), .empty(), PublishSubject<Int>().asObservable()] {
            let cancelled = Shared(0)
            let failing = Observable<Int> { observer in
                observer(.error(TestError()))
                return Subscription { cancelled.value += 1 }
            }
            let subscription = failing.catch { _ in fallback }.subscribe { _ in }
            #expect(cancelled.value == 1)
            withExtendedLifetime(subscription) {}
        }
    }

    @Test("a stream, and a fallback, that end while being subscribed leave nothing to cancel")
    func synchronousEndKeepsNothing() {
        let completed = Observable.just(1).catch { _ in Observable.just(-1) }.subscribe { _ in }
        #expect(completed === Subscription.empty)
        let recovered = Recorder(Observable<Int>.failure(TestError()).catch { _ in Observable.of(7, 8) })
        #expect(recovered.events == [.next(7), .next(8), .completed])
        let live = PublishSubject<Int>()
        let waiting = Observable.just(1).concat(live).catch { _ in Observable.just(-1) }.subscribe { _ in }
        #expect(waiting !== Subscription.empty)
        #expect(!waiting.isCancelled)
        waiting.cancel()
        #expect(live.core.observerCount == 0)
    }
}
