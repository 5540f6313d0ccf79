import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("merge")
struct MergeTests {
    @Test("merge(with:) sends the values of both streams as they arrive")
    func mergeWith() {
        let a = PublishSubject<String>()
        let b = PublishSubject<String>()
        let recorder = Recorder(a.merge(with: b))
        a.send("a1")
        b.send("b1")
        a.send("a2")
        #expect(recorder.values == ["a1", "b1", "a2"])
    }

    @Test("Observable.merge takes a variadic list or an array of streams", arguments: [1, 2, 3, 5])
    func staticForms(count: Int) {
        let subjects = (0..<count).map { _ in PublishSubject<Int>() }
        let fromArray = Recorder(Observable.merge(subjects.map { $0 as any ObservableType<Int> }))
        let variadic = Recorder(Observable.merge(subjects[0], subjects[count - 1]))
        for (index, subject) in subjects.enumerated() { subject.send(index) }
        #expect(fromArray.values == Array(0..<count))
        #expect(variadic.values == (count == 1 ? [0, 0] : [0, count - 1]))
    }

    @Test("merge of no streams completes at once")
    func noSources() {
        #expect(Recorder(Observable<Int>.merge([])).events == [.completed])
    }

    @Test("merge completes only when every source has completed")
    func completesWhenAllComplete() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let recorder = Recorder(a.merge(with: b))
        a.send(1)
        a.complete()
        b.send(2)
        #expect(!recorder.isCompleted)
        b.complete()
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test("merge completes without values when its sources are empty")
    func empty() { expectCompletesWhenEmpty { $0.merge(with: Observable<Int>.empty()) } }

    @Test("merge fails as soon as one source fails, and cancels the others")
    func failsAndCancelsOthers() {
        let a = PublishSubject<Int>()
        let otherCancelled = Shared(false)
        let other = Observable<Int>.create { _ in Subscription { otherCancelled.value = true } }
        let recorder = Recorder(a.merge(with: other))
        a.send(1)
        a.fail(TestError(code: 2))
        #expect(recorder.events == [.next(1), .error(TestError(code: 2))])
        #expect(otherCancelled.value)
    }

    @Test("merge passes the error on when the source fails")
    func error() { expectForwardsError({ $0.merge(with: Observable<Int>.never()) }, sending: [1], expecting: [1]) }

    @Test("merge stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.merge(with: Observable<Int>.never()) } }

    @Test("an observer that cancels merge mid-delivery receives nothing after, even a value queued before")
    func selfCancelDropsQueued() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = a.merge(with: b).observe { value in
            seen.value.append(value)
            if value == 1 {
                b.send(2)                       // queued: merge is delivering 1
                subscription.value?.cancel()
            }
        }
        a.send(1)
        b.send(3)
        #expect(seen.value == [1])
    }

    @Test("merge delivers values from several threads one at a time, every one of them")
    func concurrentSources() {
        let subjects = (0..<4).map { _ in PublishSubject<Int>() }
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = Observable.merge(subjects.map { $0 as any ObservableType<Int> })
            .observe { _ in detector.enter { count.value += 1 } }
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for value in 0..<5_000 { subjects[lane].send(value) }
        }
        #expect(count.value == 20_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("merge releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.merge(with: source.map { [token] in $0 + token.id })
        }
    }
}
