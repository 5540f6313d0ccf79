import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("take(until:)")
struct TakeUntilTests {
    @Test("take(until:) sends values until the other stream's first value, then completes")
    func passesValues() {
        let other = PublishSubject<Void>()
        let recorded = events(of: { source in
            source.do(onNext: { if $0 == 2 { other.send(()) } }).take(until: other)
        }, sending: [1, 2, 3], then: nil)
        // `do` runs onNext before it passes 2 on, so the other stream's value ends the result first.
        #expect(recorded == [.next(1), .completed])
    }

    @Test("take(until:) on the marbles of RxSwift's example")
    func marbles() {
        let scheduler = TestScheduler()
        let source = scheduler.hot("-a-b-c-d-|", values: ["a": 1, "b": 2, "c": 3, "d": 4], error: TestError())
        let other = scheduler.hot("------x--", values: ["x": 0], error: TestError())
        let recorder = Recorder(source.asObservable().take(until: other), scheduler: scheduler)
        scheduler.run()
        recorder.expect("-a-b-c|", values: ["a": 1, "b": 2, "c": 3], error: TestError())
    }

    @Test("take(until:) cancels both subscriptions when the other stream sends")
    func cancelsBoth() {
        let source = WatchedSubject()
        let other = WatchedSubject()
        let recorder = Recorder(source.stream.take(until: other.stream))
        source.subject.send(1)
        other.subject.send(0)
        #expect(source.cancelled.value)
        #expect(other.cancelled.value)
        source.subject.send(2)
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("take(until:) fails when the other stream fails")
    func otherFails() {
        let source = PublishSubject<Int>()
        let other = WatchedSubject()
        let recorder = Recorder(source.take(until: other.stream))
        source.send(1)
        other.subject.fail(TestError(code: 3))
        source.send(2)
        #expect(recorder.events == [.next(1), .error(TestError(code: 3))])
    }

    @Test("take(until:) goes on when the other stream completes without a value")
    func otherCompletes() {
        let source = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let recorder = Recorder(source.take(until: other))
        source.send(1)
        other.complete()
        source.send(2)
        source.complete()
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test("take(until:) subscribes the other stream first, and never subscribes a source it no longer needs")
    func otherFirst() {
        let order = Shared<[String]>([])
        let source = Observable<Int> { _ in
            order.value.append("source")
            return .empty
        }
        let quiet = Observable<Int> { _ in
            order.value.append("other")
            return .empty
        }
        _ = Recorder(source.take(until: quiet))
        #expect(order.value == ["other", "source"])
        order.value = []
        let recorder = Recorder(source.take(until: Observable.just(0)))
        #expect(order.value.isEmpty)
        #expect(recorder.events == [.completed])
    }

    @Test("take(until:) ends and cancels the other stream when the source ends", arguments: [true, false])
    func sourceEnds(fails: Bool) {
        let other = WatchedSubject()
        let recorded = events(of: { $0.take(until: other.stream) }, sending: [1],
                              then: fails ? .error(TestError()) : .completed)
        #expect(recorded == [.next(1), fails ? .error(TestError()) : .completed])
        #expect(other.cancelled.value)
    }

    @Test("take(until:) completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.take(until: PublishSubject<Int>()) } }

    @Test("take(until:) passes the error on")
    func error() { expectForwardsError({ $0.take(until: PublishSubject<Int>()) }, sending: [1, 2], expecting: [1, 2]) }

    @Test("take(until:) stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.take(until: PublishSubject<Int>()) } }

    @Test("take(until:) cancels the other stream when cancelled")
    func cancelReachesOther() {
        let other = WatchedSubject()
        let recorder = Recorder(PublishSubject<Int>().take(until: other.stream))
        recorder.cancel()
        #expect(other.cancelled.value)
    }

    @Test("take(until:) releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        let other = PublishSubject<Int>()
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.take(until: other) }
    }

    @Test("take(until:) releases the source's and the other stream's captures when the other stream sends")
    func releasesAtStop() {
        let subject = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.map { [token] in $0 + token!.id }
            .take(until: other.map { [token] in $0 + token!.id })
            .subscribe { _ in }
        token = nil
        subject.send(1)
        #expect(weakToken != nil)
        other.send(1)
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test("take(until:) delivers a value sent from inside its observer after the current one")
    func reentrant() {
        expectQueuesReentrantSends({ $0.take(until: PublishSubject<Int>()) }, sending: 1, expecting: Array(1...8))
    }

    @Test("take(until:) completes after the current value when the observer triggers the other stream")
    func reentrantStop() {
        let subject = PublishSubject<Int>()
        let other = PublishSubject<Void>()
        let received = Shared<[String]>([])
        let subscription = subject.take(until: other).subscribe(
            onNext: { value in
                received.value.append("\(value)")
                other.send(())
                subject.send(value + 1)
                received.value.append("end \(value)")
            },
            onCompleted: { received.value.append("done") }
        )
        subject.send(1)
        #expect(received.value == ["1", "end 1", "done"])
        withExtendedLifetime(subscription) {}
    }

    @Test("take(until:) stops an endless synchronous source when the other stream sends from another thread")
    func endlessSource() async {
        let other = PublishSubject<Void>()
        let count = Atomic<Int>(0)
        let endless = Observable.from(sequence(first: 1) { $0 + 1 }).do(onNext: { value in
            count.store(value, ordering: .relaxed)
        })
        Thread.detachNewThread {
            while count.load(ordering: .relaxed) < 1000 {}
            other.send(())
        }
        let recorder = Recorder(endless.take(until: other))
        #expect(recorder.isCompleted)
        #expect(recorder.values.count >= 1000)
    }

    @Test("take(until:) never delivers a source value after its completion, whatever thread sends it",
          .timeLimit(.minutes(5)))
    func raceWithOther() async {
        for _ in 0..<200 {
            let source = PublishSubject<Int>()
            let other = PublishSubject<Void>()
            let log = Mutex<[String]>([])
            let overlap = OverlapDetector()
            let subscription = source.take(until: other).subscribe(
                onNext: { value in overlap.enter { log.withLock { $0.append("\(value)") } } },
                onCompleted: { overlap.enter { log.withLock { $0.append("done") } } }
            )
            let (finished, finish) = AsyncStream<Void>.makeStream()
            Thread.detachNewThread {
                for value in 0..<500 { source.send(value) }
                finish.yield()
            }
            Thread.detachNewThread { other.send(()) }
            var waiting = finished.makeAsyncIterator()
            await waiting.next()
            while !log.withLock({ $0.contains("done") }) { await Task.yield() }
            let all = log.withLock { $0 }
            #expect(all.last == "done" && all.filter { $0 == "done" }.count == 1, "events after the completion: \(all.suffix(3))")
            #expect(overlap.overlaps == 0)
            withExtendedLifetime(subscription) {}
        }
    }

    @Test("take(until:) of two infallible streams stays infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let closed = PublishRelay<Void>()
        let result: Infallible<Int> = relay.take(until: closed)
        let recorder = Recorder(result)
        relay.accept(1)
        closed.accept(())
        relay.accept(2)
        #expect(recorder.events == [.next(1), .completed])
    }
}
