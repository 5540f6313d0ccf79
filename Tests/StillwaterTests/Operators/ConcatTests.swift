import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("concat")
struct ConcatTests {
    @Test("concat subscribes to the next stream only after the one before completed")
    func inTurn() {
        let first = PublishSubject<Int>()
        let secondSubscribed = Shared(false)
        let second = Observable<Int>.create { emitter in
            secondSubscribed.value = true
            emitter.send(10)
            return .empty
        }
        let recorder = Recorder(first.concat(second))
        first.send(1)
        #expect(!secondSubscribed.value)
        first.complete()
        #expect(secondSubscribed.value)
        #expect(recorder.values == [1, 10])
        #expect(!recorder.isCompleted)
    }

    @Test("Observable.concat takes a variadic list or a sequence of streams")
    func staticForms() {
        #expect(Recorder(Observable.concat(Observable.of(1, 2), Observable.of(3))).events
                == [.next(1), .next(2), .next(3), .completed])
        #expect(Recorder(Observable.concat((1...3).map { Observable.just($0) })).values == [1, 2, 3])
    }

    @Test("concat of no streams completes at once")
    func noSources() {
        #expect(Recorder(Observable<Int>.concat([Observable<Int>]())).events == [.completed])
    }

    @Test("concat reads a lazy sequence of streams one at a time, so an endless one works")
    func endlessSequence() {
        let streams = (1...).lazy.map { Observable.just($0) }
        let recorder = Recorder(Observable.concat(streams).take(3))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("concat of many streams that complete while subscribed does not grow the stack")
    func manySynchronous() {
        var spread = StackSpread()
        let subscription = Observable.concat((0..<10_000).map { Observable.just($0) }).observe { _ in spread.sample() }
        #expect(spread.samples == 10_000)
        #expect(spread.spread < 64 * 1024)
        withExtendedLifetime(subscription) {}
    }

    @Test("concat completes without values when its sources are empty")
    func empty() { expectCompletesWhenEmpty { $0.concat(Observable<Int>.empty()) } }

    @Test("an error stops concat: the streams after it are never subscribed")
    func errorStops() {
        expectForwardsError({ $0.concat(Observable<Int>.never()) }, sending: [1, 2], expecting: [1, 2])
        let laterSubscribed = Shared(false)
        let later = Observable<Int>.create { _ in
            laterSubscribed.value = true
            return .empty
        }
        let recorder = Recorder(Observable.concat(Observable<Int>.failure(TestError()), later))
        #expect(recorder.events == [.error(TestError())])
        #expect(!laterSubscribed.value)
    }

    @Test("concat stops when cancelled mid-stream, in either stream")
    func cancel() {
        expectStopsWhenCancelled { $0.concat(Observable<Int>.never()) }
        expectStopsWhenCancelled { Observable<Int>.empty().concat($0) }
    }

    @Test("concat releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.map { [token] in $0 + token.id }.concat(Observable<Int>.empty())
        }
    }

    @Test("a value sent to concat from inside its observer is delivered after the current one")
    func reentrantSend() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = subject.concat(Observable<Int>.never()).observe { value in
            seen.value.append("\(value)")
            if value == 1 {
                subject.send(2)
                seen.value.append("end")
            }
        }
        subject.send(1)
        #expect(seen.value == ["1", "end", "2"])
        withExtendedLifetime(subscription) {}
    }

    @Test("concat delivers one event at a time when a stream sends from several threads")
    func concurrentSends() {
        let subject = PublishSubject<Int>()
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = Observable<Int>.empty().concat(subject).observe { _ in detector.enter { count.value += 1 } }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for value in 0..<2_000 { subject.send(value) }
        }
        #expect(count.value == 8_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}
