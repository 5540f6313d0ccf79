import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("combineLatest")
struct CombineLatestTests {
    @Test("combineLatest of two sends the latest pair once both have sent")
    func twoSources() {
        let name = PublishSubject<String>()
        let age = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest(name, age).observe { seen.value.append("\($0) \($1)") }
        name.send("Ada")
        #expect(seen.value.isEmpty)
        age.send(36)
        age.send(37)
        name.send("Grace")
        #expect(seen.value == ["Ada 36", "Ada 37", "Grace 37"])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest of three sends the latest triple once all have sent")
    func threeSources() {
        let a = BehaviorSubject(1)
        let b = BehaviorSubject("x")
        let c = PublishSubject<Bool>()
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest(a, b, c).observe { seen.value.append("\($0)\($1)\($2)") }
        #expect(seen.value.isEmpty)
        c.send(true)
        a.send(2)
        b.send("y")
        #expect(seen.value == ["1xtrue", "2xtrue", "2ytrue"])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest completes when all sources have completed")
    func completesWhenAllComplete() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let completed = Shared(false)
        let values = Shared<[String]>([])
        let subscription = Observable.combineLatest(a, b).subscribe(
            onNext: { values.value.append("\($0)\($1)") }, onCompleted: { completed.value = true })
        a.send(1)
        b.send(2)
        a.complete()
        #expect(!completed.value)
        b.send(3)
        #expect(values.value == ["12", "13"])
        b.complete()
        #expect(completed.value)
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest completes at once when a source completes before sending anything",
          arguments: [0, 1, 2])
    func completesWhenOneIsEmpty(emptyIndex: Int) {
        let subjects = (0..<3).map { _ in PublishSubject<Int>() }
        let recorded = Shared<[Event<Int>]>([])
        let subscription = Observable.combineLatest(subjects[0], subjects[1], subjects[2])
            .map { $0 + $1 + $2 }
            .subscribe { recorded.value.append($0) }
        for (index, subject) in subjects.enumerated() where index != emptyIndex { subject.send(index) }
        subjects[emptyIndex].complete()
        #expect(recorded.value == [.completed])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest fails as soon as one source fails, and cancels the others")
    func failsAndCancelsOthers() {
        let a = PublishSubject<Int>()
        let otherCancelled = Shared(false)
        let other = Observable<Int>.create { emitter in
            emitter.send(10)
            return Subscription { otherCancelled.value = true }
        }
        let recorded = Shared<[Event<Int>]>([])
        let subscription = Observable.combineLatest(a, other).map { $0 + $1 }.subscribe { recorded.value.append($0) }
        a.send(1)
        a.fail(TestError(code: 3))
        a.send(2)
        #expect(recorded.value == [.next(11), .error(TestError(code: 3))])
        #expect(otherCancelled.value)
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest completes without values when its sources are empty")
    func empty() {
        expectCompletesWhenEmpty { source in Observable.combineLatest(source, source).map { $0 + $1 } }
    }

    @Test("combineLatest passes the error on when the source fails")
    func error() {
        expectForwardsError({ source in Observable.combineLatest(source, source).map { $0 * 10 + $1 } },
                            sending: [1], expecting: [11])
    }

    @Test("combineLatest of optional values keeps nil as a value")
    func optionalValues() {
        let a = PublishSubject<Int?>()
        let b = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest(a, b).observe { seen.value.append("\(String(describing: $0)) \($1)") }
        a.send(nil)
        b.send(1)
        #expect(seen.value == ["nil 1"])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { source in Observable.combineLatest(source, source).map { $0 + $1 } } }

    @Test("combineLatest delivers values from several threads one at a time")
    func concurrentSources() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = Observable.combineLatest(a, b).observe { _ in detector.enter { count.value += 1 } }
        a.send(0)
        b.send(0)
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            for value in 0..<5_000 { (lane == 0 ? a : b).send(value) }
        }
        #expect(count.value == 10_001)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            Observable.combineLatest(source, source.map { [token] in $0 + token.id }).map { $0 + $1 }
        }
    }
}

@Suite("combineLatest typed")
struct CombineLatestTypedTests {
    @Test("combineLatest keeps each value as its own type, large values included")
    func largeValues() {
        struct Big: Equatable { var a = 0, b = 0, c = 0, d = 0, e = 0 }
        let big = PublishSubject<Big>()
        let text = PublishSubject<String>()
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest(big, text).observe { seen.value.append("\($0.e)\($1)") }
        big.send(Big(e: 5))
        text.send("x")
        big.send(Big(e: 6))
        #expect(seen.value == ["5x", "6x"])
        withExtendedLifetime(subscription) {}
    }

    @Test("a value sent to combineLatest from inside its observer is delivered after the current one")
    func reentrantSend() {
        let a = PublishSubject<Int>()
        let b = BehaviorSubject(0)
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest(a, b).observe { pair in
            seen.value.append("\(pair.0)\(pair.1)")
            if pair == (1, 0) {
                b.send(2)
                a.send(3)
                seen.value.append("end")
            }
        }
        a.send(1)
        #expect(seen.value == ["10", "end", "12", "32"])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest of three sources on three threads delivers every value one at a time")
    func threeThreads() {
        let subjects = (0..<3).map { _ in PublishSubject<Int>() }
        let detector = OverlapDetector()
        let last = Shared([-1, -1, -1])
        let count = Shared(0)
        let ordered = Shared(true)
        let subscription = Observable.combineLatest(subjects[0], subjects[1], subjects[2]).observe { a, b, c in
            detector.enter {
                count.value += 1
                // Each source's values arrive in its own order.
                if a < last.value[0] || b < last.value[1] || c < last.value[2] { ordered.value = false }
                last.value = [a, b, c]
            }
        }
        for subject in subjects { subject.send(0) }
        DispatchQueue.concurrentPerform(iterations: 3) { lane in
            for value in 1...3_000 { subjects[lane].send(value) }
        }
        #expect(count.value == 9_001)
        #expect(detector.overlaps == 0)
        #expect(ordered.value)
        #expect(last.value == [3_000, 3_000, 3_000])
        withExtendedLifetime(subscription) {}
    }
}

@Suite("combineLatest of a collection")
struct CombineLatestCollectionTests {
    @Test("combineLatest of a collection sends the latest values in order once all have sent", arguments: [1, 2, 4])
    func values(count: Int) {
        let subjects = (0..<count).map { _ in PublishSubject<Int>() }
        let recorder = Recorder(Observable.combineLatest(subjects))
        for (index, subject) in subjects.enumerated() { subject.send(index) }
        subjects[0].send(10)
        let first = Array(0..<count)
        var second = first
        second[0] = 10
        #expect(recorder.values == [first, second])
    }

    @Test("combineLatest of an empty collection completes at once without a value")
    func emptyCollection() {
        let none: [PublishSubject<Int>] = []
        #expect(Recorder(Observable.combineLatest(none)).events == [.completed])
    }

    @Test("combineLatest of a collection completes when all complete, or at once when one completes empty")
    func completion() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let recorder = Recorder(Observable.combineLatest([a, b]))
        a.send(1)
        b.send(2)
        a.complete()
        b.send(3)
        #expect(!recorder.isCompleted)
        b.complete()
        #expect(recorder.events == [.next([1, 2]), .next([1, 3]), .completed])
        expectCompletesWhenEmpty { source in Observable.combineLatest([source, source]).map { $0.count } }
    }

    @Test("combineLatest of a collection passes the error on and cancels the others")
    func error() {
        expectForwardsError({ source in Observable.combineLatest([source, source]).map { $0[0] * 10 + $0[1] } },
                            sending: [1], expecting: [11])
        let a = PublishSubject<Int>()
        let otherCancelled = Shared(false)
        let other = Observable<Int>.create { _ in Subscription { otherCancelled.value = true } }
        let recorder = Recorder(Observable.combineLatest([a.asObservable(), other]))
        a.fail(TestError())
        #expect(recorder.events == [.error(TestError())])
        #expect(otherCancelled.value)
    }

    @Test("combineLatest of a collection stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { source in Observable.combineLatest([source, source]).map { $0[0] } } }

    @Test("combineLatest of a collection releases what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            Observable.combineLatest([source, source.map { [token] in $0 + token.id }])
        }
    }

    @Test("an array kept by an observer is not changed by later values")
    func keptArrayIsStable() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let kept = Shared<[[Int]]>([])
        let subscription = Observable.combineLatest([a, b]).observe { kept.value.append($0) }
        a.send(1)
        b.send(2)
        a.send(3)
        #expect(kept.value == [[1, 2], [3, 2]])
        withExtendedLifetime(subscription) {}
    }

    @Test("a value sent to combineLatest of a collection from inside its observer is delivered after the current one")
    func reentrantSend() {
        let a = PublishSubject<Int>()
        let b = BehaviorSubject(0)
        let seen = Shared<[String]>([])
        let subscription = Observable.combineLatest([a.asObservable(), b.asObservable()]).observe { values in
            seen.value.append("\(values)")
            if values == [1, 0] {
                b.send(2)
                seen.value.append("end")
            }
        }
        a.send(1)
        #expect(seen.value == ["[1, 0]", "end", "[1, 2]"])
        withExtendedLifetime(subscription) {}
    }

    @Test("combineLatest of a collection delivers values from several threads one at a time")
    func concurrentSources() {
        let subjects = (0..<4).map { _ in PublishSubject<Int>() }
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = Observable.combineLatest(subjects).observe { _ in detector.enter { count.value += 1 } }
        for subject in subjects { subject.send(0) }
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for value in 0..<3_000 { subjects[lane].send(value) }
        }
        #expect(count.value == 12_001)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}

@Suite("combineLatest cancellation")
struct CombineLatestCancellationTests {
    @Test("an observer that cancels combineLatest mid-delivery receives nothing after, even a value queued before")
    func selfCancelDropsQueued() {
        let a = PublishSubject<Int>()
        let b = BehaviorSubject(0)
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = Observable.combineLatest(a, b).observe { pair in
            seen.value.append(pair.0 * 10 + pair.1)
            if pair == (1, 0) {
                b.send(2)                       // queued: combineLatest is delivering (1, 0)
                subscription.value?.cancel()
            }
        }
        a.send(1)
        a.send(3)
        #expect(seen.value == [10])
    }
}
