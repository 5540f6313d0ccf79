import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("zip")
struct ZipTests {
    @Test("zip pairs the values of its sources by position")
    func pairsByPosition() {
        let letters = PublishSubject<String>()
        let numbers = PublishSubject<Int>()
        let recorder = Recorder(Observable.zip(letters, numbers).map { "\($0)\($1)" })
        letters.send("a")
        letters.send("b")
        #expect(recorder.values.isEmpty)
        numbers.send(1)
        numbers.send(2)
        numbers.send(3)
        letters.send("c")
        #expect(recorder.values == ["a1", "b2", "c3"])
    }

    @Test("zip of three sources of three types")
    func threeTypes() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<String>()
        let c = PublishSubject<Bool>()
        let recorder = Recorder(Observable.zip(a, b, c).map { "\($0)\($1)\($2)" })
        a.send(1)
        b.send("x")
        c.send(true)
        c.send(false)
        a.send(2)
        b.send("y")
        #expect(recorder.values == ["1xtrue", "2yfalse"])
    }

    @Test("zip completes when a completed source's waiting values are used up")
    func completesWhenExhausted() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let recorder = Recorder(Observable.zip(a, b).map { $0 * 10 + $1 })
        a.send(1)
        a.send(2)
        a.complete()
        #expect(!recorder.isCompleted)
        b.send(1)
        #expect(!recorder.isCompleted)
        b.send(2)
        #expect(recorder.events == [.next(11), .next(22), .completed])
    }

    @Test("zip completes at once when a source completes with nothing waiting")
    func completesWhenEmptyAndDone() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let recorder = Recorder(Observable.zip(a, b).map { $0 + $1 })
        b.send(5)
        b.send(6)
        a.complete()
        #expect(recorder.events == [.completed])
    }

    @Test("zip completes without values when its sources are empty")
    func empty() { expectCompletesWhenEmpty { source in Observable.zip(source, source).map { $0 + $1 } } }

    @Test("zip passes the error on and cancels the others")
    func error() {
        expectForwardsError({ source in Observable.zip(source, source).map { $0 * 10 + $1 } },
                            sending: [1, 2], expecting: [11, 22])
        let a = PublishSubject<Int>()
        let otherCancelled = Shared(false)
        let other = Observable<Int>.create { _ in Subscription { otherCancelled.value = true } }
        let recorder = Recorder(Observable.zip(a, other).map { $0 + $1 })
        a.fail(TestError())
        #expect(recorder.events == [.error(TestError())])
        #expect(otherCancelled.value)
    }

    @Test("zip stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { source in Observable.zip(source, source).map { $0 + $1 } } }

    @Test("zip releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            Observable.zip(source, source.map { [token] in $0 + token.id }).map { $0 + $1 }
        }
    }

    @Test("a value sent to zip from inside its observer is delivered after the current one")
    func reentrantSend() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = Observable.zip(a, b).observe { x, y in
            seen.value.append("\(x)\(y)")
            if x == 1 {
                a.send(2)
                b.send(2)
                seen.value.append("end")
            }
        }
        a.send(1)
        b.send(1)
        #expect(seen.value == ["11", "end", "22"])
        withExtendedLifetime(subscription) {}
    }

    @Test("zip of sources on several threads pairs every value in order, one at a time")
    func concurrentSources() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let detector = OverlapDetector()
        let pairs = Shared<[Int]>([])
        let matched = Shared(true)
        let subscription = Observable.zip(a, b).observe { x, y in
            detector.enter {
                if x != y { matched.value = false }
                pairs.value.append(x)
            }
        }
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            for value in 0..<5_000 { (lane == 0 ? a : b).send(value) }
        }
        #expect(pairs.value == Array(0..<5_000))
        #expect(matched.value)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}
