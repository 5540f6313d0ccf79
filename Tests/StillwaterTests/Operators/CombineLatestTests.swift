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
