import Dispatch
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("flatMapLatest")
struct FlatMapLatestTests {
    @Test("flatMapLatest sends the values of the latest inner stream only")
    func switches() {
        let outer = PublishSubject<String>()
        let inners = ["a": PublishSubject<Int>(), "b": PublishSubject<Int>()]
        let recorder = Recorder(outer.flatMapLatest { inners[$0]! })
        outer.send("a")
        inners["a"]!.send(1)
        outer.send("b")
        inners["a"]!.send(2)            // stale: a was replaced
        inners["b"]!.send(10)
        outer.send("a")                 // back to a, a fresh subscription
        inners["b"]!.send(11)           // stale
        inners["a"]!.send(3)
        #expect(recorder.values == [1, 10, 3])
    }

    @Test("flatMapLatest cancels the previous inner subscription when a new value arrives")
    func cancelsPreviousInner() {
        let outer = PublishSubject<Int>()
        let cancelled = Shared<[Int]>([])
        let recorder = Recorder(outer.flatMapLatest { value in
            Observable<Int>.create { emitter in
                emitter.send(value)
                return Subscription { cancelled.value.append(value) }
            }
        })
        outer.send(1)
        outer.send(2)
        #expect(cancelled.value == [1])
        outer.send(3)
        #expect(cancelled.value == [1, 2])
        recorder.cancel()
        #expect(cancelled.value == [1, 2, 3])
        #expect(recorder.values == [1, 2, 3])
    }

    @Test("flatMapLatest with synchronous inner streams sends each one's values", arguments: [[], [1], [1, 2, 3]])
    func synchronousInner(input: [Int]) {
        let result = values(of: { $0.flatMapLatest { Observable.of($0, $0 * 10) } }, sending: input)
        #expect(result == input.flatMap { [$0, $0 * 10] })
    }

    @Test("flatMapLatest completes when the outer and the current inner stream have both completed")
    func completion() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { _ in inner })
        outer.send(1)
        outer.complete()
        inner.send(5)
        #expect(!recorder.isCompleted)
        inner.complete()
        #expect(recorder.events == [.next(5), .completed])
    }

    @Test("flatMapLatest waits for the outer stream when the inner one completes first")
    func innerCompletesFirst() {
        let outer = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { Observable.just($0) })
        outer.send(1)
        #expect(!recorder.isCompleted)
        outer.send(2)
        outer.complete()
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test("flatMapLatest ignores the completion of a replaced inner stream")
    func staleCompletionIgnored() {
        let outer = PublishSubject<Int>()
        let first = PublishSubject<Int>()
        let second = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { $0 == 1 ? first : second })
        outer.send(1)
        outer.send(2)
        outer.complete()
        first.complete()
        #expect(!recorder.isCompleted)
        second.complete()
        #expect(recorder.isCompleted)
    }

    @Test("flatMapLatest completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.flatMapLatest { Observable.just($0) } } }

    @Test("flatMapLatest fails when the outer stream fails, and cancels the inner one")
    func outerError() {
        let outer = PublishSubject<Int>()
        let innerCancelled = Shared(false)
        let recorder = Recorder(outer.flatMapLatest { _ in
            Observable<Int>.create { _ in Subscription { innerCancelled.value = true } }
        })
        outer.send(1)
        outer.fail(TestError(code: 8))
        #expect(recorder.events == [.error(TestError(code: 8))])
        #expect(innerCancelled.value)
    }

    @Test("flatMapLatest fails when the inner stream fails, and cancels the outer one")
    func innerError() {
        let outerCancelled = Shared(false)
        let subject = PublishSubject<Int>()
        let outer = Observable<Int> { observer in
            let inner = subject.subscribe(observer)
            return Subscription {
                outerCancelled.value = true
                inner.cancel()
            }
        }
        let inner = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { _ in inner })
        subject.send(1)
        inner.send(4)
        inner.fail(TestError(code: 9))
        subject.send(2)
        #expect(recorder.events == [.next(4), .error(TestError(code: 9))])
        #expect(outerCancelled.value)
    }

    @Test("flatMapLatest passes the outer error on")
    func error() { expectForwardsError({ $0.flatMapLatest { Observable.just($0) } }, sending: [1], expecting: [1]) }

    @Test("flatMapLatest stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.flatMapLatest { Observable.just($0) } } }

    @Test("a replaced inner stream's values are never delivered, even when sent from another thread while switching")
    func staleValuesUnderRace() {
        // Inner stream k sends k from its own thread while the outer stream switches from k to k + 1. Once
        // the observer has seen a value of stream k, a value of an older stream would be stale.
        let switches = 300
        let outer = PublishSubject<Int>()
        let inners = (0...switches).map { _ in PublishSubject<Int>() }
        let stale = Shared(0)
        let newest = Shared(-1)
        let subscription = outer.flatMapLatest { inners[$0] }.observe { generation in
            if generation < newest.value { stale.value += 1 }
            newest.value = max(newest.value, generation)
        }
        outer.send(0)
        for generation in 0..<switches {
            DispatchQueue.concurrentPerform(iterations: 2) { lane in
                if lane == 0 {
                    for _ in 0..<20 { inners[generation].send(generation) }
                } else {
                    outer.send(generation + 1)
                }
            }
        }
        #expect(stale.value == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("flatMapLatest releases what the transform and inner streams captured when the subscription ends",
          arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.flatMapLatest { [token] value in Observable.just(value + token.id).map { [token] in $0 + token.id } }
        }
    }

    @Test("flatMapLatest releases a live inner stream's captures when cancelled")
    func releasesLiveInner() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = outer.flatMapLatest { [token] _ in inner.map { [token] in $0 + token!.id } }.observe { _ in }
        token = nil
        outer.send(1)
        inner.send(1)
        #expect(weakToken != nil)
        subscription.cancel()
        #expect(weakToken == nil)
    }
}

@Suite("flatMapLatest cancellation")
struct FlatMapLatestCancellationTests {
    @Test("an observer that cancels flatMapLatest mid-delivery receives nothing after, and no new inner stream starts")
    func selfCancelDropsQueued() {
        let outer = PublishSubject<Int>()
        let started = Shared<[Int]>([])
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = outer.flatMapLatest { value in
            Observable<Int>.create { emitter in
                started.value.append(value)
                emitter.send(value)
                return .empty
            }
        }.observe { value in
            seen.value.append(value)
            if value == 1 {
                outer.send(2)                   // queued: flatMapLatest is delivering 1
                subscription.value?.cancel()
            }
        }
        outer.send(1)
        #expect(seen.value == [1])
        #expect(started.value == [1])
    }
}

/// The synchronous path: an inner stream that sends while it is being subscribed is heard at once, on the
/// subscribing thread.
@Suite("flatMapLatest with synchronous inner streams")
struct FlatMapLatestSynchronousTests {
    @Test("a value the observer sends to the outer stream comes after the rest of the current inner stream")
    func reentrantOuterSend() {
        let outer = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = outer.flatMapLatest { Observable.of($0, $0 * 10) }.observe { value in
            seen.value.append(value)
            if value == 1 { outer.send(2) }
        }
        outer.send(1)
        #expect(seen.value == [1, 10, 2, 20])
        withExtendedLifetime(subscription) {}
    }

    @Test("an inner stream that calls its observer again from inside the observer is queued, never nested, in the order sent")
    func reentrantInnerCall() {
        // A hand-made stream with no queue of its own: the observer's first value makes it send again at once.
        let outer = PublishSubject<Int>()
        let kept = Shared<((Event<Int>) -> Void)?>(nil)
        let depth = Shared(0)
        let nested = Shared(false)
        let seen = Shared<[Int]>([])
        let subscription = outer.flatMapLatest { value in
            Observable<Int> { observer in
                kept.value = observer
                observer(.next(value))
                observer(.next(value + 1))
                return .empty
            }
        }.observe { value in
            depth.value += 1
            if depth.value > 1 { nested.value = true }
            seen.value.append(value)
            if value == 1 { kept.value?(.next(100)) }
            depth.value -= 1
        }
        outer.send(1)
        #expect(!nested.value)
        #expect(seen.value == [1, 100, 2])
        withExtendedLifetime(subscription) {}
    }

    @Test("an inner stream that keeps its observer after it ended cannot send into a later inner stream")
    func keptObserverStaysStale() {
        let outer = PublishSubject<Int>()
        let kept = Shared<((Event<Int>) -> Void)?>(nil)
        let recorder = Recorder(outer.flatMapLatest { value in
            Observable<Int> { observer in
                if value == 1 { kept.value = observer }
                observer(.next(value))
                observer(.completed)
                return .empty
            }
        })
        outer.send(1)
        outer.send(2)
        outer.send(3)
        kept.value?(.next(99))          // the first inner stream, long replaced
        kept.value?(.completed)
        #expect(recorder.values == [1, 2, 3])
        #expect(!recorder.isCompleted)
        outer.complete()
        #expect(recorder.isCompleted)
    }

    @Test("an inner stream that fails while being subscribed ends the result, and the outer stream is let go of")
    func synchronousFailure() {
        let outer = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { value in
            value == 2 ? Observable<Int>.failure(TestError()) : Observable.just(value)
        })
        outer.send(1)
        outer.send(2)
        outer.send(3)
        #expect(recorder.values == [1])
        #expect(recorder.error is TestError)
        #expect(outer.core.observerCount == 0)
    }

    @Test("the outer stream's completion after a synchronous inner stream replaced a live one completes the result")
    func completesAfterSynchronousInner() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { value in value == 1 ? inner.asObservable() : Observable.just(value) })
        outer.send(1)
        outer.send(2)                   // replaces the live inner stream with one that ends at once
        #expect(!recorder.isCompleted)
        outer.complete()
        #expect(recorder.values == [2])
        #expect(recorder.isCompleted)
        #expect(inner.core.observerCount == 0)
    }

    @Test("an inner stream's value sent from another thread while it is being subscribed keeps its place before the later ones",
          arguments: [false, true])
    func crossThreadDuringSubscribe(failing: Bool) {
        let outer = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = outer.flatMapLatest { _ in
            Observable<Int>.create { emitter in
                let sent = DispatchGroup()
                sent.enter()
                DispatchQueue.global().async {
                    emitter.send(1)
                    sent.leave()
                }
                sent.wait()
                emitter.send(2)
                if failing { emitter.fail(TestError()) }
                return .empty
            }
        }.subscribe(onNext: { seen.value.append("\($0)") }, onError: { _ in seen.value.append("error") })
        outer.send(0)
        #expect(seen.value == (failing ? ["1", "2", "error"] : ["1", "2"]))
        withExtendedLifetime(subscription) {}
    }

    @Test("cancelling lets go of the observer and the transform even when the sources keep their observers")
    func cancelReleasesWithKeptObservers() {
        let kept = Shared<[(Event<Int>) -> Void]>([])
        let keeping = Observable<Int> { observer in
            kept.value.append(observer)
            observer(.next(1))
            return Subscription {}
        }
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = keeping.flatMapLatest { [token] value in
            let bonus = token == nil ? 0 : 1          // the transform holds the token, the inner stream does not
            return keeping.map { $0 + value + bonus }
        }
            .observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subscription.cancel()
        #expect(weakToken == nil)
        #expect(kept.value.count == 2)
    }
}
